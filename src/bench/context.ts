/**
 * What every scenario gets: the client, the server's pid when local, the sizes of this run, the
 * raw-store baselines, a progress line writer; and the helpers they share (namespaces, filling a
 * namespace with ConfigMaps).
 */
import type { KubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import type { RawSubject } from './baselines.js';
import type { BenchClient } from './client.js';
import type { ClassicLevel } from 'classic-level';
import { closedLoop } from './load.js';
import { configMapBodies, JSON_TYPE, namespaceBody } from './objects.js';
import type { Row } from './report.js';
import type { PlanePids } from './ha-planes.js';

/** Sizes of one run (presets in `sizes.ts`, each overridable by a flag). */
export interface BenchSizes {
  /** Concurrent clients of the create/get/update/delete scenario. */
  readonly clients: readonly number[];
  /** How long each closed loop runs, ms. */
  readonly durationMs: number;
  /** ConfigMap payload bytes. */
  readonly objectSize: number;
  readonly listSizes: readonly number[];
  /** Timed repetitions of each list shape (the median is reported). */
  readonly listRepeats: number;
  readonly watchers: readonly number[];
  /** Writes per second during the watch scenario. */
  readonly writeRate: number;
  readonly watchDurationMs: number;
  readonly informers: readonly number[];
  readonly informerObjects: number;
  /** Objects in the populated start-up case (0: skip it). */
  readonly startupObjects: number;
  readonly mixedWorkers: number;
  /** Live ConfigMaps of the `cold` scenario. */
  readonly coldObjects: number;
  /** Events written before the `cold` scenario's first requests (creates, then updates). */
  readonly coldHistory: number;
  /** Watchers of the watch case that starts right after a burst of writes (0: none). */
  readonly burstWatchers: number;
  /** Writes (creates and deletes) of that burst. */
  readonly burstWrites: number;
  /** Pods each case of the `scheduler` scenario creates. */
  readonly schedulerPods: number;
  /** Simulated nodes of the `scheduler` scenario. */
  readonly schedulerNodes: number;
}

/** The raw stores, when enabled; the level one exposes its db for synced batches. */
export interface Baselines {
  readonly level?: RawSubject & { readonly db: ClassicLevel<string, Uint8Array> };
  readonly etcd?: RawSubject;
}

/** What a scenario runs with. */
export interface ScenarioContext {
  /** The `subject` of this server's rows: what it is (`capstan v1.33.0+capstan (etcd)`). */
  readonly subject: string;
  readonly client: BenchClient;
  /** The server's credentials: one, or one per API server of an HA control plane. */
  readonly creds: readonly KubeconfigCredentials[];
  /** A server process on this machine to read CPU and RSS from; undefined: not local. */
  readonly serverPid: number | undefined;
  /**
   * The servers and etcd members of a control plane the bench started (`--ha-compare`), whose
   * CPU per operation the crud scenario gives; undefined otherwise.
   */
  readonly planePids: PlanePids | undefined;
  readonly sizes: BenchSizes;
  /** Request body media type of writes (JSON or protobuf). */
  readonly contentType: string;
  /** Verbs the crud scenario times (`create`, `get`, `update`, `delete`). */
  readonly verbs: ReadonlySet<string>;
  readonly baselines: Baselines;
  /**
   * `capstan server` flags for servers a scenario spawns itself (start-up); undefined when the
   * measured server is not a Capstan the bench may stand in for (the other side of a comparison).
   */
  readonly serverArgs: readonly string[] | undefined;
  /**
   * Restarts the measured server on the same data and port (the client reconnects by itself);
   * undefined when the bench did not start it.
   */
  readonly restart: (() => Promise<void>) | undefined;
  readonly progress: (line: string) => void;
}

/** A scenario: measures and returns its rows. */
export type Scenario = (ctx: ScenarioContext) => Promise<Row[]>;

/** Creates a fresh namespace `bench-<what>-<suffix>` and returns its name. */
export async function createNamespace(client: BenchClient, what: string): Promise<string> {
  const name = `bench-${what}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  await client.expect('POST', '/api/v1/namespaces', 201, { body: namespaceBody(name) });
  return name;
}

/** Deletes a namespace (the server removes its objects in the background); best effort. */
export async function deleteNamespace(client: BenchClient, name: string): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => undefined);
}

/**
 * Creates ConfigMaps `<prefix><from>` .. `<prefix><to - 1>` in `namespace` with 32 concurrent
 * JSON clients (filling is set-up, not a measurement), reporting progress every 10,000.
 */
export async function populate(
  ctx: ScenarioContext,
  namespace: string,
  prefix: string,
  from: number,
  to: number,
): Promise<void> {
  const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  await closedLoop(32, { maxOps: to - from }, async (n) => {
    const i = from + n;
    await ctx.client.expect('POST', path, 201, { body: bodies.body(`${prefix}${i}`), discardBody: true });
    if ((i + 1) % 10_000 === 0) ctx.progress(`  filled ${(i + 1).toLocaleString('en-US')} objects`);
  });
}

/** Mebibytes, for RSS figures. */
export function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}

/** `n` with thousands separators, for case names. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
