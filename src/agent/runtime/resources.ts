/**
 * Pod resources as the runtime needs them: quantities parsed, the QoS class, and CRI's Linux
 * resources (cpu shares from requests, a CFS quota and a memory limit from limits), as kubelet
 * derives them with the cgroupfs driver.
 */
import type { Container, Pod } from '../../api/types/core-v1.js';
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
