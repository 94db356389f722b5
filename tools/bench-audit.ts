/**
 * Audit overhead: GET and create throughput at `--clients` concurrent clients (HTTP/2, admin
 * certificate) on a server auditing every request at Metadata level to a log file in batch mode,
 * against the same load on a server without auditing, in the same run. Phases alternate (no
 * audit, audit, no audit, audit, ...) so drift on a shared machine hits both; both servers run
 * in this process on in-memory stores. Prints ops/s per phase, the median ratio, and the
 * process CPU time per request of each side.
 *
 *   npm run build && node dist/tools/bench-audit.js [--seconds 3] [--clients 10] [--rounds 3]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { median } from '../src/bench/stats.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs, type ServerOptions } from '../src/server/options.js';
import { startServer, type RunningServer } from '../src/server/server.js';
import { sendForStatus as send } from './h2-status.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const SECONDS = arg('seconds', 3);
const CLIENTS = arg('clients', 10);
const ROUNDS = arg('rounds', 3);
const SESSIONS = 2;

async function start(audit: boolean, dir: string): Promise<RunningServer> {
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  const parsed = parseServerArgs([
    '--secure-port=0',
    '--bind-address=127.0.0.1',
    `--data-dir=${dir}`,
    ...(audit
      ? [
          `--audit-policy-file=${policy}`,
          `--audit-log-path=${join(dir, 'audit.log')}`,
          '--audit-log-mode=batch',
        ]
      : []),
  ]) as { options: ServerOptions };
  return startServer(parsed.options, { store: await openMemoryStore(), log: new ServerLog(() => undefined) });
}

function sessionsOf(server: RunningServer): ClientHttp2Session[] {
  const tls = {
    ca: server.pki.servingTrustPem,
    cert: server.pki.admin.certPem,
    key: server.pki.admin.keyPem,
  };
  return Array.from({ length: SESSIONS }, () => {
    const s = connect(server.url, tls);
    s.on('error', () => undefined);
    return s;
  });
}

let created = 0;

async function phase(
  sessions: ClientHttp2Session[],
  kind: 'get' | 'create',
): Promise<{ ops: number; cpuUs: number }> {
  const until = performance.now() + SECONDS * 1000;
  const cpu0 = process.cpuUsage();
  let ops = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const session = sessions[c % sessions.length] as ClientHttp2Session;
      while (performance.now() < until) {
        const status =
          kind === 'get'
            ? await send(session, 'GET', '/api/v1/namespaces/default/configmaps/seed')
            : await send(
                session,
                'POST',
                '/api/v1/namespaces/default/configmaps',
                JSON.stringify({
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  metadata: { name: `c${created++}` },
                  data: { k: 'v' },
                }),
              );
        if (status !== 200 && status !== 201) throw new Error(`${kind} answered ${status}`);
        ops++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { ops: ops / SECONDS, cpuUs: (cpu.user + cpu.system) / Math.max(1, ops) };
}

async function main(): Promise<void> {
  const dirs = [
    mkdtempSync(join(tmpdir(), 'capstan-bench-noaudit-')),
    mkdtempSync(join(tmpdir(), 'capstan-bench-audit-')),
  ];
  const plain = await start(false, dirs[0] as string);
  const audited = await start(true, dirs[1] as string);
  const sides = [
    { name: 'no audit', sessions: sessionsOf(plain) },
    { name: 'audit Metadata, batch', sessions: sessionsOf(audited) },
  ];
  for (const s of sides) {
    const seed = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'seed' },
      data: { k: 'v' },
    });
    await send(s.sessions[0] as ClientHttp2Session, 'POST', '/api/v1/namespaces/default/configmaps', seed);
    await phase(s.sessions, 'get'); // warm-up
  }
  for (const kind of ['get', 'create'] as const) {
    const ratios: number[] = [];
    const cpu: number[][] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      const base = await phase(sides[0]?.sessions ?? [], kind);
      const with_ = await phase(sides[1]?.sessions ?? [], kind);
      ratios.push(with_.ops / base.ops);
      cpu[0]?.push(base.cpuUs);
      cpu[1]?.push(with_.cpuUs);
      console.log(
        `${kind} round ${r + 1}: no audit ${base.ops.toFixed(0)}/s, audit ${with_.ops.toFixed(0)}/s, ratio ${(with_.ops / base.ops).toFixed(3)}`,
      );
    }
    console.log(
      `${kind}: median throughput ratio ${median(ratios).toFixed(3)}; process CPU per request ${median(cpu[0] ?? []).toFixed(0)} µs without, ${median(cpu[1] ?? []).toFixed(0)} µs with audit (CPU ratio ${(median(cpu[0] ?? []) / median(cpu[1] ?? [])).toFixed(3)})`,
    );
  }
  for (const s of sides) for (const x of s.sessions) x.close();
  await plain.shutdown();
  await audited.shutdown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

await main();
