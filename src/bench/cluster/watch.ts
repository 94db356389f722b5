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

/** One watch stream of JSON events, handed to `onEvent` line by line. */
abstract class Tracker {
  readonly #stream: BenchStream;
  #pending = '';

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
  }

  protected abstract onEvent(type: string, name: string, object: WatchObject, at: bigint): void;

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
  /** Live pods last seen Running. */
  readonly #running = new Set<string>();

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
    if (type === 'DELETED') {
      this.#running.delete(name);
      return;
    }
    const phase = object.status?.phase ?? 'Pending';
    if (phase === 'Running') this.#running.add(name);
    else this.#running.delete(name);
    if (!this.#seen.has(name)) this.#seen.set(name, at);
    if ((phase === 'Running' || phase === 'Succeeded' || phase === 'Failed') && !this.#started.has(name))
      this.#started.set(name, at);
  }

  /** Live pods last seen Running on the watch. */
  get running(): number {
    return this.#running.size;
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
