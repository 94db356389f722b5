/**
 * One timer for many deadlines: every simulated node's lease renewal, status report and every
 * pod's next transition go into one binary heap, and a single `setTimeout` is armed for the
 * earliest. Thousands of nodes cost one pending timer, not thousands.
 *
 * With a granularity, deadlines are rounded up to its grid, so keys due close together fire on
 * one turn of the loop (their requests then share socket writes): 1,000 nodes renewing leases
 * every 10 s wake the agent 10 times a second instead of 100.
 *
 * A key has at most one deadline: scheduling a key again replaces its deadline (the old heap
 * entry is left behind and skipped when it surfaces, so replacing is O(log n)).
 */

interface Entry<K> {
  readonly due: number;
  readonly key: K;
  readonly seq: number;
}

/** Deadlines by key, fired through one callback. */
export class TimerQueue<K> {
  readonly #heap: Entry<K>[] = [];
  /** The live deadline of each key (its entry's seq). */
  readonly #live = new Map<K, number>();
  readonly #fire: (key: K) => void;
  readonly #now: () => number;
  readonly #granularityMs: number;
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;
  #stopped = false;

  /**
   * @param fire called for each due key (earliest first); a throw is caught and logged so one
   *   key cannot stall the others.
   */
  constructor(fire: (key: K) => void, opts: { granularityMs?: number; now?: () => number } = {}) {
    this.#fire = fire;
    this.#now = opts.now ?? Date.now;
    this.#granularityMs = opts.granularityMs ?? 0;
  }

  /** Number of keys with a deadline. */
  get size(): number {
    return this.#live.size;
  }

  /** Sets (or moves) the deadline of `key` to the absolute time `due` (ms since the epoch). */
  at(key: K, due: number): void {
    if (this.#stopped) return;
    const seq = ++this.#seq;
    this.#live.set(key, seq);
    // Replaced entries stay in the heap until they surface; rebuild when they dominate it.
    if (this.#heap.length > 1024 && this.#heap.length > 4 * this.#live.size) this.#compact();
    this.#push({ due, key, seq });
    const g = this.#granularityMs;
    if ((g > 0 ? Math.ceil(due / g) * g : due) < this.#armedFor) this.#arm();
  }

  /** Sets the deadline of `key` to `delayMs` from now. */
  after(key: K, delayMs: number): void {
    this.at(key, this.#now() + Math.max(0, delayMs));
  }

  /** The deadline of `key`, if any. */
  has(key: K): boolean {
    return this.#live.has(key);
  }

  /** Drops the deadline of `key`. */
  cancel(key: K): void {
    this.#live.delete(key);
  }

  /** Drops every deadline and the timer; later `at` calls are ignored. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#live.clear();
    this.#heap.length = 0;
  }

  #arm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    // Skip entries replaced or cancelled since they were pushed.
    while (this.#heap.length > 0) {
      const top = this.#heap[0] as Entry<K>;
      if (this.#live.get(top.key) === top.seq) break;
      this.#pop();
    }
    const top = this.#heap[0];
    if (top === undefined || this.#stopped) return;
    const g = this.#granularityMs;
    const at = g > 0 ? Math.ceil(top.due / g) * g : top.due;
    this.#armedFor = at;
    // setTimeout's limit is 2^31-1 ms; a later deadline re-arms when this one fires.
    const delay = Math.min(Math.max(0, at - this.#now()), 0x7fffffff);
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }

  #run(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.#now();
    const due: K[] = [];
    while (this.#heap.length > 0) {
      const top = this.#heap[0] as Entry<K>;
      if (this.#live.get(top.key) !== top.seq) {
        this.#pop();
        continue;
      }
      if (top.due > now) break;
      this.#pop();
      this.#live.delete(top.key);
      due.push(top.key);
    }
    for (const key of due) {
      try {
        this.#fire(key);
      } catch (err) {
        console.error(`simulated nodes: timer for ${String(key)} failed: ${String(err)}`);
      }
    }
    if (!this.#stopped) this.#arm();
  }

  #compact(): void {
    const live = this.#heap.filter((e) => this.#live.get(e.key) === e.seq);
    this.#heap.length = 0;
    for (const e of live) this.#push(e);
  }

  #push(entry: Entry<K>): void {
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Entry<K>;
      if (p.due <= entry.due) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && (heap[r] as Entry<K>).due < (heap[l] as Entry<K>).due ? r : l;
      if ((heap[child] as Entry<K>).due >= last.due) break;
      heap[i] = heap[child] as Entry<K>;
      i = child;
    }
    heap[i] = last;
  }
}
