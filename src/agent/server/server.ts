/**
 * The agent's HTTPS API (kubelet's port 10250):
 * - `GET /healthz` → `ok`;
 * - `GET /pods` → a PodList of the pods the agent runs, with their statuses;
 * - `GET /containerLogs/{namespace}/{pod}/{container}` with `follow`, `tailLines`,
 *   `timestamps`, `previous`, `limitBytes`, `sinceSeconds`;
 * - `/exec/{namespace}/{pod}/{container}?command=...&input=1&output=1&error=1&tty=1` and
 *   `/attach/...`: the upgrade (SPDY/3.1 or WebSocket) is proxied byte for byte to the
 *   runtime's streaming server at the URL CRI's Exec or Attach answers, so every protocol that
 *   server speaks (SPDY, `channel.k8s.io` WebSockets) works; the client falls back when one is
 *   refused;
 * - `/portForward/{namespace}/{pod}[?port=...]`: the same, to the URL of CRI's PortForward for
 *   the pod's sandbox (the ports are named by the client per stream; `port` only restricts).
 * - `/manifests[/<name>]`: pods submitted to the agent (manifests.ts);
 * - `/stats/summary`, `/metrics`, `/metrics/resource`, `/metrics/probes`, `/configz`, `/spec`
 *   (`stats-routes.ts`).
 * With `--enable-debugging-handlers=false` logs, exec, attach, port-forward and manifests answer 404. Every
 * request is authenticated and authorized (`auth.ts`).
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Pod } from '../../api/types/core-v1.js';
import type { CriClient } from '../cri/client.js';
import type { ContainerInstance } from '../runtime/runtime.js';
import { AgentAuthorizer, authenticate, type AgentAuthOptions } from './auth.js';
import { writeLogs } from '../runtime/logs.js';
import { serveManifests } from './manifests.js';
import type { SubmissionSource } from '../sources/submissions.js';
import { monitoringRoute, type MonitoringView } from './stats-routes.js';

/** What the server reads of the agent. */
export interface AgentView {
  /** The pods the agent runs, with their latest statuses. */
  pods(): Pod[];
  /** A pod's containers of a name, newest first; undefined when the pod is not here. */
  containers(namespace: string, pod: string, container: string): Promise<ContainerInstance[] | undefined>;
  /** The id of a pod's ready sandbox; undefined when the pod is not here or has none ready. */
  sandbox(namespace: string, pod: string): Promise<string | undefined>;
  readonly cri: CriClient;
  /** The manifest submission source (`/manifests`, see manifests.ts); absent: not served. */
  readonly submissions?: SubmissionSource;
  /** The monitoring endpoints' view (`/stats/summary`, `/metrics...`, `/configz`, `/spec`). */
  readonly monitoring?: MonitoringView;
}

/** Server settings. */
export interface AgentServerOptions {
  readonly address: string;
  readonly port: number;
  /**
   * The serving certificate (with its chain) and key; absent until a serving certificate is
   * issued (`serverTLSBootstrap`): TLS handshakes fail until {@link AgentServers.setCertificate}.
   */
  readonly cert?: string;
  readonly key?: string;
  readonly clientCA?: string;
  readonly debuggingHandlers: boolean;
  readonly auth: AgentAuthOptions;
}

function send(res: ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'content-type': type });
  res.end(body);
}

function flag(q: URLSearchParams, ...names: string[]): boolean {
  return names.some((n) => ['1', 'true', 'True'].includes(q.get(n) ?? ''));
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null || v === '' || !/^-?\d+$/.test(v) ? undefined : Number(v);
}

function splitPath(path: string, prefix: string): [string, string, string] | undefined {
  const parts = path.slice(prefix.length).split('/').filter(Boolean).map(decodeURIComponent);
  return parts.length === 3 ? (parts as [string, string, string]) : undefined;
}

/** The streaming handler a path names, if any. */
function streamKind(path: string): 'exec' | 'attach' | 'portForward' | undefined {
  for (const kind of ['exec', 'attach', 'portForward'] as const)
    if (path.startsWith(`/${kind}/`)) return kind;
  return undefined;
}

/** `port=80,8080` (repeatable) as numbers; undefined when one is not a port. */
function portsOf(q: URLSearchParams): number[] | undefined {
  const ports = q
    .getAll('port')
    .flatMap((p) => p.split(','))
    .filter((p) => p !== '');
  const numbers = ports.map(Number);
  return numbers.every((n) => Number.isInteger(n) && n > 0 && n < 65536) ? numbers : undefined;
}

/** The running servers: the API on the port, health on the health port. */
export interface AgentServers {
  readonly server: Server;
  readonly port: number;
  /** Serves with this certificate and key from the next TLS handshake on (a rotation). */
  setCertificate(cert: string, key: string): void;
  close(): Promise<void>;
}

/** Starts the agent's HTTPS API. */
export async function startAgentServer(view: AgentView, opts: AgentServerOptions): Promise<AgentServers> {
  const authz = new AgentAuthorizer(opts.auth);
  const server = createHttpsServer({
    ...(opts.cert !== undefined && opts.key !== undefined ? { cert: opts.cert, key: opts.key } : {}),
    ...(opts.clientCA ? { ca: opts.clientCA, requestCert: true, rejectUnauthorized: false } : {}),
  });
  const gate = async (req: IncomingMessage): Promise<number> => {
    const user = authenticate(req, opts.auth);
    if (!user) return 401;
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    try {
      return (await authz.allowed(user, req.method ?? 'GET', path)) ? 0 : 403;
    } catch (err) {
      console.error(`agent: authorizing ${path}: ${(err as Error).message}`);
      return 500;
    }
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const denied = await gate(req);
      if (denied) return send(res, denied, denied === 401 ? 'Unauthorized' : 'Forbidden');
      const url = new URL(req.url ?? '/', 'https://x');
      const path = url.pathname;
      if (path === '/healthz') return send(res, 200, 'ok');
      if (path === '/pods' || path === '/pods/') {
        return send(
          res,
          200,
          JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: view.pods() }),
          'application/json',
        );
      }
      if (
        opts.debuggingHandlers &&
        view.submissions &&
        (await serveManifests(view.submissions, req, res, path))
      )
        return;
      if (opts.debuggingHandlers && path.startsWith('/containerLogs/')) {
        const parts = splitPath(path, '/containerLogs/');
        if (!parts) return send(res, 400, 'expected /containerLogs/{namespace}/{pod}/{container}');
        const [ns, pod, name] = parts;
        const list = await view.containers(ns, pod, name);
        if (!list) return send(res, 404, `pod ${ns}/${pod} not found`);
        const previous = flag(url.searchParams, 'previous');
        const inst = previous ? list[1] : list[0];
        if (!inst) {
          return send(
            res,
            400,
            previous
              ? `previous terminated container "${name}" in pod "${pod}" not found`
              : `container "${name}" in pod "${pod}" is waiting to start`,
          );
        }
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const tail = intParam(url.searchParams, 'tailLines');
        const limit = intParam(url.searchParams, 'limitBytes');
        const since = intParam(url.searchParams, 'sinceSeconds');
        await writeLogs(
          inst.logPath,
          {
            follow: flag(url.searchParams, 'follow'),
            timestamps: flag(url.searchParams, 'timestamps'),
            ...(tail !== undefined ? { tailLines: tail } : {}),
            ...(limit !== undefined ? { limitBytes: limit } : {}),
            ...(since !== undefined ? { sinceSeconds: since } : {}),
          },
          res,
          async () =>
            (await view.containers(ns, pod, name))?.[0]?.id === inst.id &&
            (await view.cri.containerStatus(inst.id)).state === 'CONTAINER_RUNNING',
          abort.signal,
        ).catch((err: unknown) =>
          console.error(`agent: logs of ${ns}/${pod}/${name}: ${(err as Error).message}`),
        );
        res.end();
        return;
      }
      if (view.monitoring) {
        const answer = await monitoringRoute(req.method ?? 'GET', path, url.searchParams, view.monitoring);
        if (answer) return send(res, answer.code, req.method === 'HEAD' ? '' : answer.body, answer.type);
      }
      if (opts.debuggingHandlers && streamKind(path) !== undefined) {
        return send(res, 400, 'Upgrade request required');
      }
      send(res, 404, '404 page not found');
    })().catch((err: unknown) => {
      console.error(`agent: ${req.url ?? ''}: ${(err as Error).message}`);
      if (!res.headersSent) send(res, 500, 'Internal Server Error');
      else res.end();
    });
  });

  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    void (async () => {
      const fail = (code: number, text: string): void => {
        socket.end(
          `HTTP/1.1 ${code} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
        );
      };
      const denied = await gate(req);
      if (denied) return fail(denied, denied === 401 ? 'Unauthorized' : 'Forbidden');
      const url = new URL(req.url ?? '/', 'https://x');
      const kind = streamKind(url.pathname);
      if (!opts.debuggingHandlers || kind === undefined) return fail(404, 'Not Found');
      const q = url.searchParams;
      let streamUrl: string;
      if (kind === 'portForward') {
        const parts = url.pathname
          .slice('/portForward/'.length)
          .split('/')
          .filter(Boolean)
          .map(decodeURIComponent);
        const ports = portsOf(q);
        if (parts.length !== 2 || ports === undefined) return fail(400, 'Bad Request');
        const [ns = '', pod = ''] = parts;
        const sandbox = await view.sandbox(ns, pod);
        if (sandbox === undefined) return fail(404, `pod ${ns}/${pod} has no running sandbox`);
        streamUrl = await view.cri.portForward(sandbox, ports);
      } else {
        const parts = splitPath(url.pathname, `/${kind}/`);
        if (!parts) return fail(400, 'Bad Request');
        const [ns, pod, name] = parts;
        const inst = (await view.containers(ns, pod, name))?.[0];
        if (!inst || inst.state !== 'CONTAINER_RUNNING')
          return fail(404, `container ${name} of pod ${ns}/${pod} is not running`);
        const io = {
          containerId: inst.id,
          tty: flag(q, 'tty'),
          stdin: flag(q, 'input', 'stdin'),
          stdout: flag(q, 'output', 'stdout'),
          stderr: flag(q, 'error', 'stderr'),
        };
        streamUrl =
          kind === 'exec'
            ? await view.cri.exec({ ...io, cmd: q.getAll('command') })
            : await view.cri.attach(io);
      }
      const target = new URL(streamUrl);
      const upstream: Socket = connect(Number(target.port || 80), target.hostname);
      upstream.on('error', () => socket.destroy());
      // The runtime's last bytes (an exit status) still reach the client: end, not destroy.
      upstream.on('close', () => socket.end());
      socket.on('error', () => upstream.destroy());
      socket.on('close', () => upstream.destroy());
      upstream.once('connect', () => {
        const lines = [
          `${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`,
          `Host: ${target.host}`,
        ];
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const k = req.rawHeaders[i] ?? '';
          if (k.toLowerCase() === 'host' || k.toLowerCase() === 'authorization') continue;
          lines.push(`${k}: ${req.rawHeaders[i + 1] ?? ''}`);
        }
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
    })().catch((err: unknown) => {
      console.error(`agent: ${req.url ?? ''}: ${(err as Error).message}`);
      socket.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    server,
    port,
    setCertificate: (cert, key) =>
      server.setSecureContext({ cert, key, ...(opts.clientCA ? { ca: opts.clientCA } : {}) }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of upgraded) s.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The plain-HTTP health server (`--healthz-bind-address`:`--healthz-port`). */
export async function startHealthServer(
  address: string,
  port: number,
  healthy: () => boolean,
): Promise<{ close(): Promise<void>; port: number }> {
  const server = createHttpServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/healthz') {
      const ok = healthy();
      send(res, ok ? 200 : 500, ok ? 'ok' : 'unhealthy');
    } else send(res, 404, '404 page not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
