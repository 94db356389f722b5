/**
 * `startup`: `capstan server` processes the bench starts itself (whatever server the other
 * scenarios target), timed from process start to the first authenticated 200 and to the first
 * `/readyz` 200, with the RSS a second later and the idle RSS once the server has settled (see
 * {@link IDLE_MS}). Once on a fresh data directory (this includes
 * generating the CA and certificates), once on a directory holding N ConfigMaps (written
 * through the API by an earlier process, then a restart).
 *
 * The servers are started with the measured server's flags when the bench started that one too
 * (then the rows carry its subject); for a server reached through a kubeconfig in a single-server
 * run they are Capstans with `--server-arg` flags, labelled as such; a server of a comparison the
 * bench did not start gets a row saying start-up was not measured (with its RSS now, when local).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import { count, createNamespace, mib, populate, type ScenarioContext } from '../context.js';
import { readProc } from '../proc.js';
import { backendOfArgs } from '../subject.js';
import type { Row } from '../report.js';
import { fmt } from '../stats.js';
import { spawnServer, type SpawnedServer } from '../server-process.js';

const SETTLE_MS = 1000;
/**
 * When the idle RSS is read, after ready. V8 keeps the start-up's young generation and freed
 * pages until its memory reducer runs, about 8 s after allocation stops; a Capstan's RSS falls
 * by some 13 MiB then. The reading a second after ready is reported too.
 */
export const IDLE_MS = 15_000;

async function measure(
  ctx: ScenarioContext,
  args: readonly string[],
  subject: string,
  dataDir: string,
  label: string,
): Promise<{ row: Row; server: SpawnedServer }> {
  const server = await spawnServer({ dataDir, extraArgs: args });
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const early = readProc(server.pid);
  ctx.progress(`  ${label}: first request ${fmt(server.firstRequestMs)} ms, ready ${fmt(server.readyMs)} ms`);
  await new Promise((r) => setTimeout(r, IDLE_MS - SETTLE_MS));
  const idle = readProc(server.pid);
  return {
    server,
    row: {
      scenario: 'startup',
      case: label,
      subject,
      figures: {
        'first request ms': server.firstRequestMs,
        'readyz ms': server.readyMs,
        ...(early === undefined ? {} : { 'RSS 1 s after ready MiB': mib(early.rssBytes) }),
        ...(idle === undefined ? {} : { 'idle RSS MiB': mib(idle.rssBytes) }),
      },
    },
  };
}

/** Starts a fresh server, fills it, restarts it. */
export async function startupScenario(ctx: ScenarioContext): Promise<Row[]> {
  const args = ctx.serverArgs;
  if (args === undefined) {
    const now = ctx.serverPid === undefined ? undefined : readProc(ctx.serverPid);
    return [
      {
        scenario: 'startup',
        case: 'fresh data dir',
        subject: ctx.subject,
        figures: now === undefined ? {} : { 'RSS now MiB': mib(now.rssBytes) },
        note: 'start-up not measured: the bench did not start this server',
      },
    ];
  }
  const subject =
    ctx.restart !== undefined
      ? ctx.subject
      : `capstan started by the bench (${backendOfArgs(['capstan', 'server', ...args]) ?? 'backend unknown'})`;
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-startup-'));
  const rows: Row[] = [];
  try {
    ctx.progress('startup: fresh data dir');
    const fresh = await measure(ctx, args, subject, join(dir, 'data'), 'fresh data dir');
    rows.push(fresh.row);
    const n = ctx.sizes.startupObjects;
    try {
      if (n > 0) {
        ctx.progress(`startup: filling ${count(n)} objects`);
        const client = new BenchClient(readKubeconfigCredentials(fresh.server.kubeconfigPath), 2);
        try {
          const ns = await createNamespace(client, 'startup');
          await populate({ ...ctx, client }, ns, 'cm-', 0, n);
        } finally {
          client.close();
        }
      }
    } finally {
      await fresh.server.stop();
    }
    if (n > 0) {
      const populated = await measure(ctx, args, subject, join(dir, 'data'), `${count(n)} objects`);
      await populated.server.stop();
      rows.push(populated.row);
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
