/**
 * What a cluster bench measures: a whole stack (an API server with its store, controllers, a
 * scheduler and simulated nodes), started by the bench and stopped by it.
 */
import type { BenchClient } from '../client.js';
import type { Children } from './children.js';

/** The annotation and label kwok manages nodes by (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** The client settings every controller manager and scheduler under test gets. */
export interface ClientSettings {
  readonly qps: number;
  readonly burst: number;
}

/** A started stack. */
export interface Stack {
  /** The rows' subject (`capstan v1.33.0+capstan (server + agent --simulate)`). */
  readonly label: string;
  /** What runs, for the report's subjects. */
  readonly target: string;
  readonly kubeconfig: string;
  /** An admin client of the stack's API server. */
  readonly client: BenchClient;
  /** The stack's processes (their RSS and CPU are the stack's). */
  readonly children: Children;
  /** The pid of the process simulating the nodes, once started. */
  nodesPid(): number | undefined;
  /**
   * Brings up `n` simulated nodes (Capstan: `capstan agent --simulate`; kube: Node objects kwok
   * manages); resolves once started, not once Ready.
   */
  startNodes(n: number): Promise<void>;
  /** The names of nodes this stack simulates (a label selector for node lists). */
  readonly nodeSelector: string;
  /** Rejects when a process of the stack exits before the stack is stopped. */
  readonly lost: Promise<never>;
  /** Stops every process and removes the stack's directory. Idempotent. */
  stop(): Promise<void>;
}

/** A `Stack`'s processes' pids. */
export function stackPids(stack: Stack): number[] {
  return stack.children.running().map((c) => c.pid);
}
