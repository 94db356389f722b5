/**
 * Watches the pods of one namespace and notes when each was first seen bound (`spec.nodeName`
 * set), by the bench's clock: the "bound" end of a pod's scheduling latency.
 */
import type { BenchClient, BenchStream } from '../client.js';
import { lineSplitter } from '../lines.js';

/** Pod watch events carry at most this much before a newline; longer text is a broken stream. */
const MAX_LINE = 1 << 20;

/** The bind times of one namespace's pods, from a watch. */
export class BindWatch {
  readonly #stream: BenchStream;
  /** Pod name → `process.hrtime.bigint()` when its bound state first arrived. */
  readonly #bound = new Map<string, bigint>();
  readonly #nodes = new Map<string, string>();
  #chunks = 0;
  #events = 0;
  #lastChunk: bigint | undefined;
  #waiter: { readonly names: ReadonlySet<string>; left: number; readonly resolve: () => void } | undefined;

  private constructor(client: BenchClient, namespace: string) {
    const lines = lineSplitter((line) => this.#line(line), MAX_LINE);
    this.#stream = client.stream(`/api/v1/namespaces/${namespace}/pods?watch=true`, (chunk) => {
      this.#chunks++;
      this.#lastChunk = process.hrtime.bigint();
      lines(chunk);
    });
  }

  /**
   * Opens the watch and resolves once the server answered it (so that every pod created after
   * is seen). The namespace should be fresh: existing pods arrive as ADDED events.
   * @throws Error when the watch is refused.
   */
  static async open(client: BenchClient, namespace: string): Promise<BindWatch> {
    const w = new BindWatch(client, namespace);
    const status = await w.#stream.status;
    if (status !== 200) {
      w.close();
      throw new Error(`the pod watch of ${namespace} answered HTTP ${status}`);
    }
    return w;
  }

  #line(line: string): void {
    this.#events++;
    // Only events of bound pods matter: skip the parse for the rest. A line arrives with a chunk,
    // so it was seen when that chunk came.
    if (line.includes('"nodeName"')) this.#event(line, this.#lastChunk as bigint);
  }

  #event(line: string, at: bigint): void {
    let ev: { type?: string; object?: { metadata?: { name?: string }; spec?: { nodeName?: string } } };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch {
      return;
    }
    const name = ev.object?.metadata?.name;
    const node = ev.object?.spec?.nodeName;
    if (name === undefined || node === undefined || node === '' || this.#bound.has(name)) return;
    this.#bound.set(name, at);
    this.#nodes.set(name, node);
    const w = this.#waiter;
    if (w !== undefined && w.names.has(name) && --w.left === 0) {
      this.#waiter = undefined;
      w.resolve();
    }
  }

  /** When `name` was first seen bound; undefined: not (yet). */
  boundAt(name: string): bigint | undefined {
    return this.#bound.get(name);
  }

  /** The node `name` was bound to; undefined: not bound (yet). */
  nodeOf(name: string): string | undefined {
    return this.#nodes.get(name);
  }

  /** What the watch received, for a failure's message. */
  describe(): string {
    const ago =
      this.#lastChunk === undefined
        ? 'never'
        : `${(Number(process.hrtime.bigint() - this.#lastChunk) / 1e9).toFixed(1)} s ago`;
    return `the watch got ${this.#events} events in ${this.#chunks} chunks, the last ${ago}`;
  }

  /** Pods seen bound so far. */
  get boundCount(): number {
    return this.#bound.size;
  }

  /**
   * Resolves once every pod of `names` was seen bound; rejects when `abort` rejects first (a
   * deadline, the scheduler exiting) or the watch ends.
   */
  async allBound(names: readonly string[], abort: Promise<never>): Promise<void> {
    const set = new Set(names);
    let left = 0;
    for (const n of set) if (!this.#bound.has(n)) left++;
    if (left === 0) return;
    const done = new Promise<void>((resolve) => (this.#waiter = { names: set, left, resolve }));
    const ended = this.#stream.ended.then(() => {
      throw new Error('the pod watch ended');
    });
    try {
      await Promise.race([done, abort, ended]);
    } finally {
      this.#waiter = undefined;
    }
  }

  close(): void {
    this.#stream.close();
  }
}
