/**
 * Storage metrics with kube-apiserver's names: `etcd_request_duration_seconds{operation,type}`
 * timed around every store call the resource layer makes (whatever the backend: the embedded log
 * answers to the same name, as kine's users see it), and `apiserver_storage_objects{resource}`
 * counted at scrape time.
 */
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  GetResult,
  KeySpan,
  RangeOptions,
  RangeResult,
  Store,
  TxnRequest,
  UpdateOptions,
  Watch,
  WatchOptions,
  WriteResult,
} from '../../storage/interface.js';
import { PassThroughStore } from '../../storage/pass-through-store.js';
import { REQUEST_DURATION_BUCKETS } from './apiserver.js';
import { keptByPair, type Histogram, type HistogramSeries, type MetricsRegistry } from './registry.js';

/** The storage resource of a key under the prefix: `/configmaps/ns/x` → `configmaps`. */
function typeOf(key: string): string {
  const end = key.indexOf('/', 1);
  const first = end < 0 ? key.slice(1) : key.slice(1, end);
  if (!first.includes('.')) return first;
  // Group-prefixed storage resources (`/apiregistration.k8s.io/apiservices/x`).
  const next = key.indexOf('/', end + 1);
  return next < 0 ? key.slice(1) : key.slice(1, next);
}

function spanKey(span: KeySpan): string {
  return 'prefix' in span ? span.prefix : span.start;
}

/** One resource `apiserver_storage_objects` reports. */
export interface CountedResource {
  /** The label: kube's `<plural>` or `<plural>.<group>`. */
  readonly resource: string;
  /** Where its objects are stored (`services/specs`, `apiregistration.k8s.io/apiservices`). */
  readonly storageResource: string;
}

/**
 * A store that times every call on `etcd_request_duration_seconds`. Every request makes at
 * least one call: the series are kept per operation and type, and the call's promise is
 * chained, not awaited in an extra async frame.
 */
class TimedStore extends PassThroughStore {
  readonly #histogram: Histogram;
  readonly #seriesOf: (operation: string, type: string) => HistogramSeries;

  constructor(inner: Store, histogram: Histogram) {
    super(inner);
    this.#histogram = histogram;
    this.#seriesOf = keptByPair((operation, type) => histogram.child([operation, type]));
  }

  #time<T>(operation: string, key: string, call: Promise<T>): Promise<T> {
    const started = performance.now();
    const done = (): void =>
      this.#histogram.observeChild(
        this.#seriesOf(operation, typeOf(key)),
        (performance.now() - started) / 1000,
      );
    return call.then(
      (v) => {
        done();
        return v;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  }

  get(key: string, options?: GetOptions): Promise<GetResult> {
    return this.#time('get', key, this.inner.get(key, options));
  }

  range(span: KeySpan, options?: RangeOptions): Promise<RangeResult> {
    return this.#time(
      options?.countOnly === true ? 'count' : 'list',
      spanKey(span),
      this.inner.range(span, options),
    );
  }

  create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    return this.#time('create', key, this.inner.create(key, value, options));
  }

  update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    return this.#time('update', key, this.inner.update(key, value, options));
  }

  delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    return this.#time('delete', key, this.inner.delete(key, options));
  }

  txn(request: TxnRequest): Promise<WriteResult> {
    return this.#time('txn', '', this.inner.txn(request));
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    return this.inner.watch(span, options);
  }

  /** The wrapper does not own the store: the server closes the root store itself. */
  override close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Registers the storage families on `registry` and returns `store` timed. `counted` are the
 * resources whose object counts `apiserver_storage_objects` reports (one count-only range per
 * resource at scrape time).
 */
export function instrumentStore(
  registry: MetricsRegistry,
  store: Store,
  counted: readonly CountedResource[],
): Store {
  const histogram = registry.histogram(
    'etcd_request_duration_seconds',
    'Etcd request latency in seconds for each operation and object type.',
    ['operation', 'type'],
    REQUEST_DURATION_BUCKETS,
  );
  const objects = registry.gauge(
    'apiserver_storage_objects',
    'Number of stored objects at the time of last check split by kind.',
    ['resource'],
  );
  registry.collectOnScrape(async () => {
    const counts = await Promise.all(
      counted.map(async (r) => {
        const res = await store.range({ prefix: `/${r.storageResource}/` }, { countOnly: true });
        return [r.resource, res.count] as const;
      }),
    );
    for (const [r, n] of counts) objects.set([r], n);
  });
  return registry.enabled(histogram.name) ? new TimedStore(store, histogram) : store;
}
