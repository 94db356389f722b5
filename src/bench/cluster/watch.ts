/**
 * A watch of one namespace's pods, noting by the bench's clock when each pod was first seen and
 * first seen started (Running, or already done): the pod start-up latencies of the cluster
 * bench. Whether a step is done is decided by polling the objects (`scenarios.ts`), not by this
 * watch: a watch that holds back its last events (as Capstan's did, see docs/bench/cluster.md)
 * must not stall a step.
 */
import type { BenchClient, BenchStream } from '../client.js';
import type { StepResult } from './measure.js';

/** A watch line longer than this without a newline is a broken stream. */
const MAX_LINE = 8 << 20;

/** Wait before resuming a watch the server ended. */
const RESUME_DELAY_MS = 100;

interface WatchObject {
  metadata?: { name?: string; resourceVersion?: string };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
}

/**
 * One watch stream of JSON events, handed to `onEvent` line by line. When the server ends it
 * (kube-apiserver closes a watcher that falls behind), it is resumed from the last event's
 * resourceVersion, as an informer would; when that is refused, events may be missing and
 * {@link note} says why.
 */
abstract class Tracker {
  #stream: BenchStream;
  #pending = '';
  #resourceVersion: string | undefined;
  #closed = false;
  /** How many times the server ended the watch and it was resumed. */
  #resumed = 0;
  /** Why events may be missing, once they may. */
  #lost: string | undefined;

  protected constructor(
    private readonly client: BenchClient,
    private readonly path: string,
  ) {
    this.#stream = this.#watch(path);
  }

  #watch(path: string): BenchStream {
    const stream = this.client.stream(path, (chunk) => this.#take(chunk));
    void stream.ended.then(() => this.#resume());
    return stream;
  }

  async #resume(): Promise<void> {
    if (this.#closed) return;
    await new Promise((r) => setTimeout(r, RESUME_DELAY_MS));
    if (this.#closed) return;
    // Before any event, from now: the namespace's pods, if any, arrive as ADDED.
    const rv = this.#resourceVersion;
    this.#pending = '';
    this.#resumed++;
    try {
      this.#stream = this.#watch(rv === undefined ? this.path : `${this.path}&resourceVersion=${rv}`);
    } catch (err) {
      this.#stop(`resuming the watch from ${rv}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const status = await this.#stream.status;
    if (status !== 200) this.#stop(`resuming the watch from ${rv} answered HTTP ${status}`);
  }

  #stop(why: string): void {
    this.#lost ??= why;
    this.close();
  }

  /**
   * What a report should say of this watch: nothing when it ran whole, how often it was resumed,
   * or why events may be missing.
   */
  get note(): string | undefined {
    if (this.#lost !== undefined) return `pod watch incomplete (${this.#lost})`;
    return this.#resumed === 0 ? undefined : `pod watch resumed ${this.#resumed} time(s)`;
  }

  /** Whether every event since the watch opened arrived. */
  get whole(): boolean {
    return this.#lost === undefined;
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
      if (ev.type === 'ERROR') {
        this.#stop(`an ERROR event: ${line.slice(0, 200)}`);
        return;
      }
      const name = ev.object?.metadata?.name;
      this.#resourceVersion = ev.object?.metadata?.resourceVersion ?? this.#resourceVersion;
      if (ev.type !== undefined && ev.object !== undefined && name !== undefined)
        this.onEvent(ev.type, name, ev.object, now);
    }
    if (this.#pending.length > MAX_LINE) this.#pending = '';
  }

  protected abstract onEvent(type: string, name: string, object: WatchObject, at: bigint): void;

  close(): void {
    this.#closed = true;
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

  /**
   * A step's start-up latencies since `since` ({@link startupLatencies}) and the watch's note;
   * no latencies when events may be missing.
   */
  stepResult(since: bigint): StepResult {
    const note = this.note;
    return {
      ...(this.whole ? { startups: this.startupLatencies(since) } : {}),
      ...(note === undefined ? {} : { note }),
    };
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
