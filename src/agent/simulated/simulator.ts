/**
 * `startSimulatedNodes`: the library entry of simulated nodes, for `capstan agent --simulate`,
 * tests, `tools/run.sh` and `capstan bench cluster`. Wiring only: one client, one shared
 * informer each for our Nodes and for bound pods, one timer queue for every deadline, the node
 * fleet ({@link NodeFleet}) and the pod workers ({@link PodWorkers}).
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import {
  Client,
  NODES,
  PODS,
  podSharingTransform,
  SharedInformerFactory,
  type ClientConfig,
} from '../../client/index.js';
import { SIM } from './annotations.js';
import { NodeFleet, LEASE_TIMER, STATUS_TIMER } from './fleet.js';
import { DEFAULT_OPTIONS, type SimulatedNodesOptions } from './options.js';
import { POD_TIMER, PodWorkers } from './pods.js';
import { TimerQueue } from './timer-queue.js';

/** Deadlines within this many ms fire together (batched writes; see TimerQueue). */
const TIMER_GRANULARITY_MS = 100;

/** A running set of simulated nodes. */
export interface SimulatedNodes {
  /** The node names, in slot order. */
  readonly nodeNames: readonly string[];
  /** Resolves once every node has tried to register (and the registered ones are heartbeating). */
  readonly registered: Promise<void>;
  /**
   * Stops (false) or resumes (true) a node's heartbeat, as the `sim.capstan.dev/heartbeat`
   * annotation does; undefined hands control back to the annotation.
   */
  setHeartbeat(name: string, on: boolean | undefined): void;
  /** Makes a node report Ready or NotReady; undefined hands control back to the annotation. */
  setReady(name: string, ready: boolean | undefined): void;
  /** Simulated pods by phase (as the informer last saw them). */
  podPhases(): Record<string, number>;
  /** Stops everything (Nodes and Leases stay in the API, as a stopped kubelet leaves them). */
  stop(): Promise<void>;
}

/** Optional knobs of {@link startSimulatedNodes}. */
export interface StartOptions {
  /** Where progress and problems go (default: stderr). */
  readonly log?: (line: string) => void;
}

/**
 * Starts `options.nodes` simulated nodes against the API server of `config`. Registration runs in
 * the background (await `registered`); aborting `signal` stops everything, as `stop()` does.
 * @throws when the informers cannot sync (bad credentials, unreachable server) before `signal`.
 */
export async function startSimulatedNodes(
  config: ClientConfig,
  options: Partial<SimulatedNodesOptions>,
  signal?: AbortSignal,
  start: StartOptions = {},
): Promise<SimulatedNodes> {
  const opts: SimulatedNodesOptions = { ...DEFAULT_OPTIONS, ...options };
  const log = start.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const client = new Client(config);
  // Pods without managedFields and with their workloads' repeated parts held once: 10,000
  // simulated pods are 10,000 cached ones here (src/client/pod-sharing.ts). Nothing here writes
  // a cached pod (statuses are built new, pod-status.ts).
  const factory = new SharedInformerFactory(client, { transform: podSharingTransform() });
  // Deadlines fire only after start-up, when both sides below exist.
  const timers = new TimerQueue<string>(
    (key) => {
      if (key.startsWith(POD_TIMER)) pods.fire(key);
      else if (key.startsWith(LEASE_TIMER) || key.startsWith(STATUS_TIMER)) fleet.fire(key);
    },
    { granularityMs: TIMER_GRANULARITY_MS },
  );
  const fleet: NodeFleet = new NodeFleet(client, opts, timers, (node) => pods.enqueueNode(node), log);
  const nodeInformer = factory.informer<Node>(NODES, { labelSelector: `${SIM.nodeLabel}=true` });
  const podInformer = factory.informer<Pod>(PODS, { fieldSelector: 'spec.nodeName!=' });
  nodeInformer.addHandler({
    add: (node) => fleet.observe(node.metadata.name ?? '', node),
    update: (_old, node) => fleet.observe(node.metadata.name ?? '', node),
    delete: (node) => fleet.observe(node.metadata.name ?? '', undefined),
  });
  const pods: PodWorkers = new PodWorkers(client, podInformer, fleet, timers, log);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      timers.stop();
      fleet.stop();
      await pods.stop();
      await factory.stop();
      await client.close();
    })();
    return stopping;
  };
  signal?.addEventListener('abort', () => void stop(), { once: true });

  factory.start();
  try {
    await factory.waitForSync(signal);
  } catch (err) {
    await stop();
    throw new Error(`simulated nodes: the informers did not sync: ${String(err)}`, { cause: err });
  }
  const workers = pods.run(opts.podWorkers);
  workers.catch((err: unknown) => log(`simulated nodes: pod workers stopped: ${String(err)}`));
  const registered = fleet.registerAll(Math.max(1, Math.min(64, opts.podWorkers * 2)));

  return {
    nodeNames: [...fleet.all()].map((n) => n.name),
    registered,
    setHeartbeat: (name, on) => fleet.override(name, 'heartbeat', on),
    setReady: (name, ready) => fleet.override(name, 'ready', ready),
    podPhases: () => pods.countByPhase(),
    stop,
  };
}
