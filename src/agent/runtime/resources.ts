/**
 * Pod resources as the runtime needs them: quantities parsed, the QoS class, and CRI's Linux
 * resources (cpu shares from requests, a CFS quota and a memory limit from limits), as kubelet
 * derives them with the cgroupfs driver.
 */
import type { Container, Pod, ResourceRequirements } from '../../api/types/core-v1.js';
import type { LinuxContainerResources } from '../cri/types.js';

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource quantity (`100m`, `64Mi`, `1e3`) as a number; NaN when malformed. */
export function parseQuantity(q: string | undefined): number {
  if (q === undefined) return NaN;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) return NaN;
  const mult = SUFFIX[m[2] ?? ''];
  return mult === undefined ? NaN : Number(m[1]) * mult;
}

function allContainers(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

/** The pod's QoS class: Guaranteed, Burstable or BestEffort (kube's rules on cpu and memory). */
export function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  let any = false;
  let guaranteed = true;
  for (const c of allContainers(pod)) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const l = lim[r];
      const q = req[r] ?? l;
      if (q !== undefined && parseQuantity(q) !== 0) any = true;
      if (l === undefined || parseQuantity(l) === 0) guaranteed = false;
      else if (q !== undefined && parseQuantity(q) !== parseQuantity(l)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const CFS_PERIOD = 100_000;

/** CRI Linux resources of a container (kubelet's cgroupfs mapping). */
export function linuxResources(c: Container, qos: string): LinuxContainerResources {
  const req = c.resources?.requests ?? {};
  const lim = c.resources?.limits ?? {};
  const cpuReq = parseQuantity(req['cpu'] ?? lim['cpu']);
  const cpuLim = parseQuantity(lim['cpu']);
  const memLim = parseQuantity(lim['memory']);
  const out: LinuxContainerResources = {
    cpuShares: Number.isFinite(cpuReq) ? Math.max(2, Math.floor((cpuReq * 1000 * 1024) / 1000)) : 2,
    oomScoreAdj: qos === 'Guaranteed' ? -997 : qos === 'BestEffort' ? 1000 : 500,
  };
  if (Number.isFinite(cpuLim)) {
    out.cpuPeriod = CFS_PERIOD;
    out.cpuQuota = Math.max(1000, Math.floor(cpuLim * CFS_PERIOD));
  }
  if (Number.isFinite(memLim)) out.memoryLimitInBytes = Math.floor(memLim);
  return out;
}

/** kubelet's floor for cpu shares and its smallest effective CFS limit, in millicores. */
const MIN_SHARES = 2;
const MIN_MILLI_CPU_LIMIT = 10;

/** A millicore amount as kube prints it (DecimalSI): `250m`, `2`. */
function milliText(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** A byte amount as kube prints it (BinarySI): `64Mi`, or the plain number. */
function bytesText(bytes: number): string {
  for (const [suffix, factor] of [
    ['Ei', 2 ** 60],
    ['Pi', 2 ** 50],
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${suffix}`;
  }
  return String(bytes);
}

/** The cpu request a number of cpu shares stands for (kubelet's sharesToMilliCPU). */
function sharesToMilli(shares: number): number {
  return shares >= MIN_SHARES ? Math.ceil((shares * 1000) / 1024) : 0;
}

/** Which of cpu and memory differ between two containers' cgroup settings (what a resize changes). */
export function changedResources(
  a: LinuxContainerResources,
  b: LinuxContainerResources,
): ('cpu' | 'memory')[] {
  const n = (v: number | undefined): number => (v !== undefined && v > 0 ? v : 0);
  const out: ('cpu' | 'memory')[] = [];
  if (n(a.cpuShares) !== n(b.cpuShares) || n(a.cpuQuota) !== n(b.cpuQuota)) out.push('cpu');
  if (n(a.memoryLimitInBytes) !== n(b.memoryLimitInBytes)) out.push('memory');
  return out;
}

/**
 * A container status's `resources` (kubelet's convertContainerStatusResources): the allocated
 * requests and limits, with the cpu request, cpu limit and memory limit the runtime reports
 * for a running container in their place.
 */
export function statusResources(
  allocated: ResourceRequirements | undefined,
  actual: LinuxContainerResources | undefined,
  running: boolean,
): ResourceRequirements {
  const out: ResourceRequirements = {};
  if (allocated?.limits) out.limits = { ...allocated.limits };
  if (allocated?.requests) out.requests = { ...allocated.requests };
  if (allocated?.claims) out.claims = allocated.claims.map((c) => ({ ...c }));
  if (!running || actual === undefined) return out;
  if (out.limits) {
    const quota = actual.cpuQuota ?? 0;
    const period = actual.cpuPeriod ?? 0;
    if (quota > 0 && period > 0) {
      const milli = Math.floor((quota * 1000) / period);
      const wanted = parseQuantity(out.limits['cpu']) * 1000;
      if (milli > MIN_MILLI_CPU_LIMIT || wanted > MIN_MILLI_CPU_LIMIT) out.limits['cpu'] = milliText(milli);
    }
    const memory = actual.memoryLimitInBytes ?? 0;
    if (memory > 0) out.limits['memory'] = bytesText(memory);
  }
  if (out.requests && (actual.cpuShares ?? 0) > 0) {
    const milli = sharesToMilli(actual.cpuShares ?? 0);
    const wanted = parseQuantity(out.requests['cpu']) * 1000;
    if (milli > MIN_SHARES || wanted > MIN_SHARES) out.requests['cpu'] = milliText(milli);
  }
  return out;
}
