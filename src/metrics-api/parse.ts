/**
 * Reads the node agent's `/metrics/resource` (kubelet's Prometheus text) into the points
 * metrics-server keeps: the node's cumulative CPU seconds and working set, and per container the
 * same with its start time. A point's time is its sample's timestamp (when the agent measured
 * it), else the scrape's time. Families other than these are ignored; malformed lines are
 * skipped, as a scraper must not fail on one bad series.
 */

/** One measured value. */
export interface Point {
  readonly value: number;
  /** Epoch milliseconds. */
  readonly ts: number;
}

/** A container's figures in one scrape. */
export interface ContainerPoints {
  cpu?: Point;
  memory?: Point;
  /** Epoch seconds. */
  startTime?: number;
}

/** One scrape of one node. */
export interface NodeScrape {
  /** Epoch ms when the scrape was answered. */
  readonly at: number;
  readonly cpu?: Point;
  readonly memory?: Point;
  /** `namespace/pod` → container name → figures. */
  readonly pods: ReadonlyMap<string, ReadonlyMap<string, ContainerPoints>>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const m of text.matchAll(LABEL)) {
    out[m[1] ?? ''] = (m[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return out;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** Parses a `/metrics/resource` answer scraped at `at` (epoch ms). */
export function parseResourceMetrics(body: string, at: number): NodeScrape {
  let cpu: Point | undefined;
  let memory: Point | undefined;
  const pods = new Map<string, Map<string, ContainerPoints>>();
  const container = (l: Record<string, string>): ContainerPoints | undefined => {
    const ns = l['namespace'];
    const pod = l['pod'];
    const name = l['container'];
    if (!ns || !pod || !name) return undefined;
    const key = `${ns}/${pod}`;
    let m = pods.get(key);
    if (!m) pods.set(key, (m = new Map<string, ContainerPoints>()));
    let c = m.get(name);
    if (!c) m.set(name, (c = {}));
    return c;
  };
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const name = m[1] ?? '';
    const value = parseValue(m[4] ?? '');
    if (!Number.isFinite(value)) continue;
    const point: Point = { value, ts: m[5] !== undefined ? Number(m[5]) : at };
    switch (name) {
      case 'node_cpu_usage_seconds_total':
        cpu = point;
        break;
      case 'node_memory_working_set_bytes':
        memory = point;
        break;
      case 'container_cpu_usage_seconds_total': {
        const c = container(labelsOf(m[3]));
        if (c) c.cpu = point;
        break;
      }
      case 'container_memory_working_set_bytes': {
        const c = container(labelsOf(m[3]));
        if (c) c.memory = point;
        break;
      }
      case 'container_start_time_seconds': {
        const c = container(labelsOf(m[3]));
        if (c) c.startTime = value;
        break;
      }
    }
  }
  return { at, ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}), pods };
}
