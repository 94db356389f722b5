/**
 * Opens one measured server for a run: through a kubeconfig, or a `capstan server` the bench
 * starts itself on a temporary data dir (which it can then restart and stops at the end). Checks
 * that it answers with these credentials and finds out what it is (`subject.ts`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KubeconfigError,
  readKubeconfigCredentials,
  type KubeconfigCredentials,
} from '../pki/kubeconfig-credentials.js';
import { BenchClient } from './client.js';
import type { Baselines, BenchSizes, ScenarioContext } from './context.js';
import { BenchError } from './errors.js';
import { spawnServer, type SpawnedServer } from './server-process.js';
import { identifySubject, type SubjectIdentity } from './subject.js';
import type { Teardown } from './teardown.js';
import type { PlanePids } from './ha-planes.js';

/**
 * Where a subject is: a kubeconfig (or one per API server of an HA control plane), or (none
 * given) a server the bench starts with `serverArgs`.
 */
export interface SubjectSpec {
  readonly kubeconfig: readonly string[] | undefined;
  readonly context: string | undefined;
  readonly serverPid: number | undefined;
  /** Flags of a server the bench starts (no kubeconfig), or of start-up's stand-in servers. */
  readonly serverArgs: readonly string[];
  /**
   * With a kubeconfig: may scenarios that start their own servers (start-up) start Capstans with
   * `serverArgs` in this server's place? True for a single-server run (the bench's long-standing
   * behaviour), false for either side of a comparison.
   */
  readonly standIn: boolean;
  /** `A` or `B` in a comparison: prefixed to the subject label. */
  readonly name?: string;
  /** What runs behind the kubeconfigs, for the report's target (a control plane the bench started). */
  readonly about?: string;
  /** The processes of a control plane the bench started. */
  readonly planePids?: PlanePids;
}

/** What a run shares with every subject's scenarios. */
export interface RunSettings {
  readonly sizes: BenchSizes;
  readonly contentType: string;
  readonly verbs: ReadonlySet<string>;
  readonly sessions: number;
  readonly baselines: Baselines;
  readonly progress: (line: string) => void;
}

/** An opened subject. */
export interface OpenedSubject {
  readonly ctx: ScenarioContext;
  readonly identity: SubjectIdentity;
  /** Where it runs, for the report header. */
  readonly target: string;
}

function credentials(path: string, context: string | undefined): KubeconfigCredentials {
  try {
    return readKubeconfigCredentials(path, context);
  } catch (err) {
    if (err instanceof KubeconfigError) throw new BenchError('BENCH_KUBECONFIG', err.message, { cause: err });
    throw err;
  }
}

/**
 * Checks that the server answers an authenticated read: the first thing any scenario needs.
 * @throws BenchError BENCH_UNREACHABLE, BENCH_UNAUTHORIZED (401/403) or BENCH_HTTP_STATUS.
 */
async function preflight(client: BenchClient): Promise<void> {
  await client.expect('GET', '/api/v1/namespaces/default', 200, { discardBody: true });
}

/** Opens `spec`; everything it starts is stopped by `teardown`. */
export async function openSubject(
  spec: SubjectSpec,
  settings: RunSettings,
  teardown: Teardown,
): Promise<OpenedSubject> {
  const prefix = spec.name === undefined ? '' : `${spec.name}: `;
  let creds: KubeconfigCredentials[];
  let target: string;
  let server: SpawnedServer | undefined;
  let restart: (() => Promise<void>) | undefined;
  const live: { client?: BenchClient } = {};
  const spawned = spec.kubeconfig === undefined;
  if (spec.kubeconfig !== undefined) {
    const paths = spec.kubeconfig;
    creds = paths.map((p) => credentials(p, spec.context));
    target = `${creds.map((c) => c.server).join(', ')} (kubeconfig ${paths.join(', ')})${spec.about === undefined ? '' : `: ${spec.about}`}`;
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-'));
    teardown.add(() => rm(dir, { recursive: true, force: true }));
    settings.progress(`${prefix}starting capstan server on a temporary data dir`);
    const dataDir = join(dir, 'data');
    const extraArgs = spec.serverArgs;
    let current = await spawnServer({ dataDir, extraArgs });
    server = current;
    teardown.add(() => current.stop());
    creds = [credentials(current.kubeconfigPath, undefined)];
    target = `capstan server started by the bench${extraArgs.length === 0 ? '' : ` with ${extraArgs.join(' ')}`}`;
    restart = async () => {
      await current.stop();
      current = await spawnServer({ dataDir, extraArgs, port: current.port });
      server = current;
      live.client?.reset();
    };
  }
  const opened = new BenchClient(creds, settings.sessions);
  live.client = opened;
  teardown.add(() => opened.close());
  // Every server of a control plane answers (round-robin: one read per session reaches each).
  for (let i = 0; i < creds.length; i++) await preflight(opened);
  const identity = await identifySubject(opened, {
    ...(spawned ? { spawnedArgs: spec.serverArgs } : {}),
    ...(server !== undefined
      ? { pid: server.pid }
      : spec.serverPid === undefined
        ? {}
        : { pid: spec.serverPid }),
  });
  const externalPid = identity.pid;
  // Two servers the bench started differ by their flags: the label says which (storage flags
  // already show as the backend).
  const flags = spawned ? spec.serverArgs.filter((a) => !a.startsWith('--etcd-')) : [];
  const servers = creds.length === 1 ? '' : ` × ${creds.length} servers`;
  const ctx: ScenarioContext = {
    subject: `${prefix}${identity.label}${servers}${flags.length === 0 ? '' : ` ${flags.join(' ')}`}`,
    client: opened,
    creds,
    // One process's CPU and RSS do not describe a control plane of several servers.
    get serverPid(): number | undefined {
      return creds.length > 1 ? undefined : (server?.pid ?? externalPid);
    },
    planePids: spec.planePids,
    sizes: settings.sizes,
    contentType: settings.contentType,
    verbs: settings.verbs,
    baselines: settings.baselines,
    serverArgs: spawned || spec.standIn ? spec.serverArgs : undefined,
    restart,
    progress: settings.progress,
  };
  return { ctx, identity, target };
}
