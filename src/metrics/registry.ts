/**
 * Prometheus metrics without a client library: counters, gauges and histograms with labels, and
 * the text exposition format (version 0.0.4) that Prometheus and kube's tooling scrape. The hot
 * path costs one Map lookup per observation: a metric keeps a series per joined label values. A
 * path that observes the same labels again and again keeps the series itself ({@link
 * Counter.child}) and pays one addition.
 *
 * One {@link MetricsRegistry} per server (no global state); collectors computed at scrape time
 * (process figures, object counts) register a callback instead of being updated on every event.
 */

/** The kind of a metric family, as the `# TYPE` line names it. */
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** What every family shares. */
interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  /** Appends the family's sample lines (without HELP/TYPE). */
  render(out: string[]): void;
}

const SEP = '\u0000';

/** Label values escaped as the text format wants (backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** `{a="x",b="y"}` for `names` and the joined `key`, plus an optional extra label. */
function labelText(names: readonly string[], key: string, extra?: string): string {
  const values = names.length === 0 ? [] : key.split(SEP);
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

abstract class Labelled<Series> implements Family {
  readonly name: string;
  readonly help: string;
  abstract readonly type: MetricType;
  readonly labelNames: readonly string[];
  protected readonly series = new Map<string, Series>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /**
   * The series of `values` (one per label name, in order), created on first use. A hot path may
   * keep it and update it directly; a gauge's `reset()` drops its series, so children of a gauge
   * that is reset must not be kept.
   */
  child(values: readonly string[]): Series {
    if (values.length !== this.labelNames.length) {
      throw new Error(
        `metric ${this.name} takes ${this.labelNames.length} label values, got ${values.length}`,
      );
    }
    const key = values.join(SEP);
    let s = this.series.get(key);
    if (s === undefined) {
      s = this.create();
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract create(): Series;
  abstract render(out: string[]): void;
}

/** A value that only goes up. */
export class Counter extends Labelled<{ value: number }> {
  readonly type = 'counter';

  protected create(): { value: number } {
    return { value: 0 };
  }

  inc(values: readonly string[] = [], by = 1): void {
    this.child(values).value += by;
  }

  /** The current value of one series (tests). */
  get(values: readonly string[] = []): number {
    return this.series.get(values.join(SEP))?.value ?? 0;
  }

  render(out: string[]): void {
    for (const [key, s] of this.series) {
      out.push(`${this.name}${labelText(this.labelNames, key)} ${formatNumber(s.value)}`);
    }
  }
}

/** A value that goes up and down. */
export class Gauge extends Labelled<{ value: number }> {
  readonly type = 'gauge';

  protected create(): { value: number } {
    return { value: 0 };
  }

  set(values: readonly string[], value: number): void {
    this.child(values).value = value;
  }

  inc(values: readonly string[] = [], by = 1): void {
    this.child(values).value += by;
  }

  dec(values: readonly string[] = [], by = 1): void {
    this.child(values).value -= by;
  }

  /** Drops every series (collectors that recompute all values at scrape time). */
  reset(): void {
    this.series.clear();
  }

  get(values: readonly string[] = []): number {
    return this.series.get(values.join(SEP))?.value ?? 0;
  }

  render(out: string[]): void {
    for (const [key, s] of this.series) {
      out.push(`${this.name}${labelText(this.labelNames, key)} ${formatNumber(s.value)}`);
    }
  }
}

/** One series of a histogram. */
export interface HistogramSeries {
  /** Per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into fixed buckets. */
export class Histogram extends Labelled<HistogramSeries> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  protected create(): HistogramSeries {
    return { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }

  observe(values: readonly string[], value: number): void {
    this.observeChild(this.child(values), value);
  }

  /** Observes `value` on a series kept from {@link child}. */
  observeChild(s: HistogramSeries, value: number): void {
    let i = 0;
    while (i < this.buckets.length && value > (this.buckets[i] as number)) i++;
    s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count += 1;
  }

  /** Number of observations of one series (tests). */
  count(values: readonly string[] = []): number {
    return this.series.get(values.join(SEP))?.count ?? 0;
  }

  render(out: string[]): void {
    for (const [key, s] of this.series) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += s.counts[i] ?? 0;
        const le = i === this.buckets.length ? '+Inf' : formatNumber(this.buckets[i] as number);
        out.push(`${this.name}_bucket${labelText(this.labelNames, key, `le="${le}"`)} ${cumulative}`);
      }
      out.push(`${this.name}_sum${labelText(this.labelNames, key)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, key)} ${s.count}`);
    }
  }
}

/**
 * `make(a, b)` kept per pair of label values: a hot path that updates the same few series again
 * and again looks them up by two Map gets instead of joining its labels each time.
 */
export function keptByPair<S>(make: (a: string, b: string) => S): (a: string, b: string) => S {
  const kept = new Map<string, Map<string, S>>();
  return (a, b) => {
    let byB = kept.get(a);
    if (byB === undefined) {
      byB = new Map<string, S>();
      kept.set(a, byB);
    }
    let s = byB.get(b);
    if (s === undefined) {
      s = make(a, b);
      byB.set(b, s);
    }
    return s;
  };
}

/** The metric families of one server, and the collectors that refresh some of them at scrape time. */
export class MetricsRegistry {
  readonly #families = new Map<string, Family>();
  readonly #collectors: Array<() => void | Promise<void>> = [];
  readonly #disabled: ReadonlySet<string>;

  /** `disabled`: names of families turned off (`--disabled-metrics`). */
  constructor(disabled: Iterable<string> = []) {
    this.#disabled = new Set(disabled);
  }

  /** False for a family turned off: its callers may skip the work of recording it. */
  enabled(name: string): boolean {
    return !this.#disabled.has(name);
  }

  /** True when one of `families` is on (callers whose families are all off record nothing). */
  anyEnabled(families: Iterable<{ readonly name: string }>): boolean {
    for (const f of families) if (this.enabled(f.name)) return true;
    return false;
  }

  /** A disabled family is still returned (updates go nowhere) but never served. */
  #add<F extends Family>(family: F): F {
    if (!this.enabled(family.name)) return family;
    if (this.#families.has(family.name)) throw new Error(`metric ${family.name} is registered twice`);
    this.#families.set(family.name, family);
    return family;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  /** Runs `collect` before every scrape (it sets gauges); a failing collector is skipped. */
  collectOnScrape(collect: () => void | Promise<void>): void {
    this.#collectors.push(collect);
  }

  /** The text exposition of every family, families sorted by name. */
  async expose(): Promise<string> {
    await Promise.all(
      this.#collectors.map(async (c) => {
        try {
          await c();
        } catch {
          // A collector that cannot read its source leaves its last values in place.
        }
      }),
    );
    const out: string[] = [];
    for (const name of [...this.#families.keys()].sort()) {
      const f = this.#families.get(name) as Family;
      out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${f.name} ${f.type}`);
      f.render(out);
    }
    out.push('');
    return out.join('\n');
  }
}
