/**
 * Usage from two scrapes, as metrics-server computes it: CPU is the cumulative CPU seconds'
 * difference over the time between the two samples (nanocores), memory the newest working set;
 * the object's `timestamp` is the newest sample's time and `window` the time between the two.
 *
 * - A node needs both CPU samples and a memory sample; a counter that went backwards or a window
 *   that is not positive gives no metrics (the next pair will).
 * - A pod is reported only when every container of its newest scrape has a usage: present in
 *   both scrapes, the same start time (no restart between them), a positive window. The pod's
 *   timestamp and window are those of its container sampled earliest, as metrics-server does.
 *
 * Quantities are written as kube writes metrics-server's: CPU in canonical decimal nanocores
 * (`12345n`, `100m`, `1`), memory in canonical binary bytes (`3Mi`, `1200Ki`, `5242881`).
 */
import type { ContainerPoints, NodeScrape, Point } from './parse.js';

/** A usage and when it was measured. */
export interface Usage {
  /** CPU in nanocores (integer). */
  readonly cpuNanoCores: number;
  readonly memoryBytes: number;
  /** Epoch ms of the newest sample. */
  readonly timestamp: number;
  /** Milliseconds between the two samples. */
  readonly windowMs: number;
}

/** A container's usage in a pod's metrics. */
export interface ContainerUsage {
  readonly name: string;
  readonly cpuNanoCores: number;
  readonly memoryBytes: number;
}

/** A CPU rate between two cumulative samples (seconds); undefined when not computable. */
export function cpuRate(prev: Point, last: Point): { nanoCores: number; windowMs: number } | undefined {
  const windowMs = last.ts - prev.ts;
  if (windowMs <= 0 || last.value < prev.value) return undefined;
  return { nanoCores: Math.round(((last.value - prev.value) * 1e9) / (windowMs / 1000)), windowMs };
}

/** The node's usage between two scrapes. */
export function nodeUsage(prev: NodeScrape, last: NodeScrape): Usage | undefined {
  if (!prev.cpu || !last.cpu || !last.memory) return undefined;
  const rate = cpuRate(prev.cpu, last.cpu);
  if (!rate) return undefined;
  return {
    cpuNanoCores: rate.nanoCores,
    memoryBytes: last.memory.value,
    timestamp: last.cpu.ts,
    windowMs: rate.windowMs,
  };
}

function containerRate(prev: ContainerPoints | undefined, last: ContainerPoints) {
  if (!prev?.cpu || !last.cpu || !last.memory) return undefined;
  if (prev.startTime !== undefined && last.startTime !== undefined && prev.startTime !== last.startTime)
    return undefined;
  const rate = cpuRate(prev.cpu, last.cpu);
  return rate ? { ...rate, memory: last.memory.value, ts: last.cpu.ts } : undefined;
}

/** A pod's usage between two scrapes (`key` = `namespace/name`). */
export function podUsage(
  prev: NodeScrape,
  last: NodeScrape,
  key: string,
): { timestamp: number; windowMs: number; containers: ContainerUsage[] } | undefined {
  const now = last.pods.get(key);
  const before = prev.pods.get(key);
  if (!now || !before || now.size === 0) return undefined;
  const containers: ContainerUsage[] = [];
  let earliest = Infinity;
  let windowMs = 0;
  for (const [name, c] of now) {
    const r = containerRate(before.get(name), c);
    if (!r) return undefined;
    containers.push({ name, cpuNanoCores: r.nanoCores, memoryBytes: r.memory });
    if (r.ts < earliest) {
      earliest = r.ts;
      windowMs = r.windowMs;
    }
  }
  containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { timestamp: earliest, windowMs, containers };
}

const DECIMAL: readonly [number, string][] = [
  [18, 'E'],
  [15, 'P'],
  [12, 'T'],
  [9, 'G'],
  [6, 'M'],
  [3, 'k'],
];

/** An integer count of `10^exp` units in kube's canonical DecimalSI form. */
function decimalSI(mantissa: bigint, exp: number): string {
  if (mantissa === 0n) return '0';
  let m = mantissa;
  let e = exp;
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  // Down to a multiple of three, never below nano.
  while (((e % 3) + 3) % 3 !== 0) {
    m *= 10n;
    e--;
  }
  if (e === 0) return `${m}`;
  if (e === -3) return `${m}m`;
  if (e === -6) return `${m}u`;
  if (e === -9) return `${m}n`;
  const suffix = DECIMAL.find(([p]) => p === e)?.[1];
  return suffix ? `${m}${suffix}` : `${m}e${e}`;
}

/** CPU nanocores as a quantity (`resource.NewScaledQuantity(n, resource.Nano)`). */
export function cpuQuantity(nanoCores: number): string {
  return decimalSI(BigInt(Math.max(0, Math.round(nanoCores))), -9);
}

/** Bytes as a quantity (`resource.NewQuantity(n, resource.BinarySI)`). */
export function memoryQuantity(bytes: number): string {
  const n = BigInt(Math.max(0, Math.round(bytes)));
  if (n < 1024n) return decimalSI(n, 0);
  let v = n;
  let power = 0;
  while (power < 6 && v % 1024n === 0n) {
    v /= 1024n;
    power++;
  }
  if (power === 0) return decimalSI(n, 0);
  return `${v}${['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][power]}`;
}
