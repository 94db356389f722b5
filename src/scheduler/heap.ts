/** A binary heap with a removable-by-key entry set: the active and backoff queues. */
export class KeyedHeap<T> {
  readonly #items: T[] = [];
  readonly #index = new Map<string, number>();

  constructor(
    private readonly key: (item: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.#items.length;
  }

  has(key: string): boolean {
    return this.#index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.#index.get(key);
    return i === undefined ? undefined : this.#items[i];
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds or replaces the item with the same key. */
  push(item: T): void {
    const k = this.key(item);
    const at = this.#index.get(k);
    if (at !== undefined) {
      this.#items[at] = item;
      this.#fix(at);
      return;
    }
    this.#items.push(item);
    this.#index.set(k, this.#items.length - 1);
    this.#up(this.#items.length - 1);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top === undefined) return undefined;
    this.delete(this.key(top));
    return top;
  }

  delete(key: string): T | undefined {
    const i = this.#index.get(key);
    if (i === undefined) return undefined;
    const item = this.#items[i] as T;
    const last = this.#items.pop() as T;
    this.#index.delete(key);
    if (i < this.#items.length) {
      this.#items[i] = last;
      this.#index.set(this.key(last), i);
      this.#fix(i);
    }
    return item;
  }

  values(): readonly T[] {
    return this.#items;
  }

  #fix(i: number): void {
    this.#up(i);
    this.#down(i);
  }

  #swap(i: number, j: number): void {
    const a = this.#items[i] as T;
    const b = this.#items[j] as T;
    this.#items[i] = b;
    this.#items[j] = a;
    this.#index.set(this.key(b), i);
    this.#index.set(this.key(a), j);
  }

  #up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.#items[i] as T, this.#items[p] as T)) return;
      this.#swap(i, p);
      i = p;
    }
  }

  #down(i: number): void {
    const n = this.#items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(this.#items[l] as T, this.#items[m] as T)) m = l;
      if (r < n && this.less(this.#items[r] as T, this.#items[m] as T)) m = r;
      if (m === i) return;
      this.#swap(i, m);
      i = m;
    }
  }
}
