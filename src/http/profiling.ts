/**
 * Profiling endpoints (`--profiling`, default on, as kube-apiserver's `/debug/pprof/`), in the
 * formats Node's own tooling and Chrome DevTools read rather than Go's pprof:
 *
 * - `GET /debug/pprof/profile?seconds=N` (default 30, at most 300): a CPU profile of the server's
 *   main thread for N seconds, a `.cpuprofile` JSON (DevTools: Performance → Load profile, or
 *   speedscope; the same format as `node --cpu-prof`).
 * - `GET /debug/pprof/heap`: a heap snapshot now, a `.heapsnapshot` JSON (DevTools: Memory →
 *   Load). Taking it stops the server for a moment and costs about twice the heap in memory.
 * - `GET /debug/pprof/allocs?seconds=N` (default 30): a sampling heap profile of allocations over
 *   N seconds that are still alive at the end, a `.heapprofile` JSON (DevTools: Memory → Load).
 *
 * Only for users in `system:masters` (kube-apiserver leaves `/debug/pprof` to RBAC; until
 * authorization exists, the cluster-admin group is the only safe answer). One profile at a
 * time: a second request while one runs gets 429, since two sessions would profile each other.
 */
import { Session } from 'node:inspector/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, forbidden } from '../api/errors.js';

/** The group whose members may profile the server. */
export const PROFILING_GROUP = 'system:masters';

const MAX_SECONDS = 300;
const DEFAULT_SECONDS = 30;

function authorize(request: FastifyRequest): void {
  if (!request.user.groups.includes(PROFILING_GROUP))
    throw forbidden(`User "${request.user.name}" cannot get path "${request.url.split('?')[0] ?? ''}"`);
}

function seconds(request: FastifyRequest): number {
  const raw = (request.query as Record<string, unknown>)['seconds'];
  if (raw === undefined) return DEFAULT_SECONDS;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 1 || n > MAX_SECONDS)
    throw badRequest(`seconds must be an integer from 1 to ${MAX_SECONDS}`);
  return n;
}

function attachment(reply: FastifyReply, name: string): FastifyReply {
  return reply
    .header('content-type', 'application/json')
    .header('content-disposition', `attachment; filename="${name}"`)
    .header('cache-control', 'no-store');
}

const sleep = (s: number): Promise<void> => new Promise((r) => setTimeout(r, s * 1000));

/**
 * Registers the `/debug/pprof/` routes on `app`. Call only when `--profiling` is on: with it off
 * the paths do not exist (404), as in kube-apiserver.
 */
export function registerProfilingRoutes(app: FastifyInstance): void {
  // One inspector session per profile, and one profile at a time per server.
  let busy = false;
  const exclusive = async <T>(fn: (session: Session) => Promise<T>): Promise<T> => {
    if (busy)
      throw new ApiError('TooManyRequests', 'a profile is already being taken; try again when it finishes');
    busy = true;
    const session = new Session();
    session.connect();
    try {
      return await fn(session);
    } finally {
      session.disconnect();
      busy = false;
    }
  };

  app.get('/debug/pprof/profile', async (request, reply) => {
    authorize(request);
    const s = seconds(request);
    const profile = await exclusive(async (session) => {
      await session.post('Profiler.enable');
      // 100 µs sampling (Node's default is 1 ms): enough detail for request paths of a few ms.
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
      await sleep(s);
      const { profile } = await session.post('Profiler.stop');
      await session.post('Profiler.disable');
      return profile;
    });
    return attachment(reply, `capstan-${Date.now()}.cpuprofile`).send(JSON.stringify(profile));
  });

  app.get('/debug/pprof/heap', async (request, reply) => {
    authorize(request);
    const snapshot = await exclusive(async (session) => {
      const chunks: string[] = [];
      session.on('HeapProfiler.addHeapSnapshotChunk', (m) => chunks.push(m.params.chunk));
      await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      return chunks.join('');
    });
    return attachment(reply, `capstan-${Date.now()}.heapsnapshot`).send(snapshot);
  });

  app.get('/debug/pprof/allocs', async (request, reply) => {
    authorize(request);
    const s = seconds(request);
    const profile = await exclusive(async (session) => {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', { samplingInterval: 32 * 1024 });
      await sleep(s);
      const { profile } = await session.post('HeapProfiler.stopSampling');
      await session.post('HeapProfiler.disable');
      return profile;
    });
    return attachment(reply, `capstan-${Date.now()}.heapprofile`).send(JSON.stringify(profile));
  });
}
