/**
 * A watch of one namespace's pods, noting by the bench's clock when each pod was first seen and
 * first seen started (Running, or already done): the pod start-up latencies of the cluster
 * bench. Whether a step is done is decided by polling the objects (`scenarios.ts`), not by this
 * watch: a watch that holds back its last events (as Capstan's did, see docs/bench/cluster.md)
 * must not stall a step.
 */
import type { BenchClient, BenchStream } from '../client.js';

/** A watch line longer than this without a newline is a broken stream. */
const MAX_LINE = 8 << 20;

interface WatchObject {
  metadata?: { name?: string };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
}

/** A waiter on a tracker's counters. */
interface Waiter {
  readonly done: () => boolean;
  readonly resolve: () => void;
}

/** One watch stream of JSON events, handed to `onEvent` line by line. */
abstract class Tracker {
  readonly #stream: BenchStream;
  #pending = '';
  readonly #waiters = new Set<Waiter>();

  protected constructor(client: BenchClient, path: string) {
    this.#stream = client.stream(path, (chunk) => this.#take(chunk));
  }

  /** Resolves once the server answered the watch. @throws Error when it refused it. */
  protected async opened(path: string): Promise<void> {
    const status = await this.#stream.status;
    if (status !== 200) {
      this.close();
      throw new Error(`the watch ${path} answered HTTP ${status}`);
    }
  }

  #take(chunk: Buffer): void {
    const now = process.hrtime.bigint();
    this.#pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = this.#pending.indexOf('\n')) !== -1) {
      const line = this.#pending.slice(0, nl);
      this.#pending = this.#pending.slice(nl + 1);
      let ev: { type?: string; object?: WatchObject };
      try {
        ev = JSON.parse(line) as typeof ev;
      } catch {
        continue;
      }
      const name = ev.object?.metadata?.name;
      if (ev.type !== undefined && ev.object !== undefined && name !== undefined)
        this.onEvent(ev.type, name, ev.object, now);
    }
    if (this.#pending.length > MAX_LINE) this.#pending = '';
    for (const w of this.#waiters)
      if (w.done()) {
        this.#waiters.delete(w);
        w.resolve();
      }
  }

  protected abstract onEvent(type: string, name: string, object: WatchObject, at: bigint): void;

  /**
   * Resolves once `done()` holds (checked after every chunk); rejects when `abort` rejects first
   * or the watch ends.
   */
  async until(done: () => boolean, abort: Promise<never>): Promise<void> {
    if (done()) return;
    let waiter: Waiter | undefined;
    const reached = new Promise<void>((resolve) => this.#waiters.add((waiter = { done, resolve })));
    const ended = this.#stream.ended.then(() => {
      throw new Error('the watch ended');
    });
    try {
      await Promise.race([reached, abort, ended]);
    } finally {
      if (waiter !== undefined) this.#waiters.delete(waiter);
    }
  }

  close(): void {
    this.#stream.close();
  }
}

/** The pods of one namespace. */
export class PodTracker extends Tracker {
  /** Pod → when first seen (ADDED). */
  readonly #seen = new Map<string, bigint>();
  /** Pod → when first seen Running (or Succeeded / Failed: started and done). */
  readonly #started = new Map<string, bigint>();
  /** Live pods → their last phase. */
  readonly #phase = new Map<string, string>();
  #running = 0;

  private constructor(client: BenchClient, path: string) {
    super(client, path);
  }

  /** Opens the watch of `namespace`'s pods (a fresh namespace: every pod arrives as ADDED). */
  static async open(client: BenchClient, namespace: string): Promise<PodTracker> {
    const path = `/api/v1/namespaces/${namespace}/pods?watch=true&allowWatchBookmarks=false`;
    const t = new PodTracker(client, path);
    await t.opened(path);
    return t;
  }

  protected onEvent(type: string, name: string, object: WatchObject, at: bigint): void {
    const before = this.#phase.get(name);
    if (before === 'Running') this.#running--;
    if (type === 'DELETED') {
      this.#phase.delete(name);
      return;
    }
    const phase = object.status?.phase ?? 'Pending';
    this.#phase.set(name, phase);
    if (phase === 'Running') this.#running++;
    if (!this.#seen.has(name)) this.#seen.set(name, at);
    if ((phase === 'Running' || phase === 'Succeeded' || phase === 'Failed') && !this.#started.has(name))
      this.#started.set(name, at);
  }

  /** Live pods whose phase is Running. */
  get running(): number {
    return this.#running;
  }

  /** Pods that exist (not yet seen DELETED). */
  get live(): number {
    return this.#phase.size;
  }

  /** Up to `k` live pods as `name (phase)`, for an error message. */
  liveSample(k = 3): string {
    return [...this.#phase]
      .slice(0, k)
      .map(([name, phase]) => `${name} (${phase})`)
      .join(', ');
  }

  /** Pods seen at all (created). */
  get created(): number {
    return this.#seen.size;
  }

  /** When the `n`-th pod (1-based, by first sight) was first seen; undefined before. */
  nthSeen(n: number): bigint | undefined {
    if (n < 1 || n > this.#seen.size) return undefined;
    let i = 0;
    for (const at of this.#seen.values()) if (++i === n) return at;
    return undefined;
  }

  /** Milliseconds from first sight to started of every pod first seen at or after `since`. */
  startupLatencies(since: bigint): number[] {
    const out: number[] = [];
    for (const [name, seen] of this.#seen) {
      if (seen < since) continue;
      const started = this.#started.get(name);
      if (started !== undefined) out.push(Number(started - seen) / 1e6);
    }
    return out;
  }
}

/**
 * The number of pods in `namespace`, from a one-item list page (`remainingItemCount`): cheap at
 * any size, and true whatever a watch delivered.
 * @throws BenchError when the list fails.
 */
export async function podCount(client: BenchClient, namespace: string): Promise<number> {
  const r = await client.expect('GET', `/api/v1/namespaces/${namespace}/pods?limit=1`, 200);
  const list = JSON.parse(r.body.toString('utf8')) as {
    metadata?: { remainingItemCount?: number; continue?: string };
    items: unknown[];
  };
  return list.items.length + (list.metadata?.remainingItemCount ?? 0);
}
