/**
 * Resource amounts and a pod's requests as kube-scheduler counts them: the larger of the init
 * containers' peak and the app containers' sum (sidecars, restartable init containers, run beside
 * both), plus the pod's overhead. CPU is in millicores, everything else in units.
 */
import type { Container, ContainerStatus, Pod } from '../api/types/core-v1.js';
import { milliValue, unitValue } from './quantity.js';

/** Default requests counted for scoring when a container names none (kube's non-zero defaults). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** 200 MiB. */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** An amount of each resource; `scalar` holds extended resources, hugepages and the like. */
export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  allowedPodNumber = 0;
  scalar: Map<string, number> | undefined;

  /** Adds a resource list (`{cpu: '1', 'example.com/gpu': '2'}`). */
  addList(list: Readonly<Record<string, string>> | undefined): void {
    if (list === undefined) return;
    for (const name in list) this.addOne(name, list[name]);
  }

  /** Adds one named quantity; a malformed quantity counts as 0. */
  addOne(name: string, quantity: string | undefined): void {
    switch (name) {
      case 'cpu':
        this.milliCPU += milliValue(quantity);
        return;
      case 'memory':
        this.memory += unitValue(quantity);
        return;
      case 'ephemeral-storage':
        this.ephemeralStorage += unitValue(quantity);
        return;
      case 'pods':
        this.allowedPodNumber += unitValue(quantity);
        return;
      default:
        if (isScalarResourceName(name)) this.setScalar(name, this.getScalar(name) + unitValue(quantity));
    }
  }

  getScalar(name: string): number {
    return this.scalar?.get(name) ?? 0;
  }

  setScalar(name: string, value: number): void {
    (this.scalar ??= new Map()).set(name, value);
  }

  /** this += other (or -= with sign -1). */
  add(other: Resource, sign = 1): void {
    this.milliCPU += sign * other.milliCPU;
    this.memory += sign * other.memory;
    this.ephemeralStorage += sign * other.ephemeralStorage;
    this.allowedPodNumber += sign * other.allowedPodNumber;
    if (other.scalar !== undefined) {
      for (const [k, v] of other.scalar) this.setScalar(k, this.getScalar(k) + sign * v);
    }
  }

  /** this = max(this, other) per resource. */
  max(other: Resource): void {
    this.milliCPU = Math.max(this.milliCPU, other.milliCPU);
    this.memory = Math.max(this.memory, other.memory);
    this.ephemeralStorage = Math.max(this.ephemeralStorage, other.ephemeralStorage);
    if (other.scalar !== undefined) {
      for (const [k, v] of other.scalar) this.setScalar(k, Math.max(this.getScalar(k), v));
    }
  }

  clone(): Resource {
    const r = new Resource();
    r.add(this);
    return r;
  }

  /** The amount of a resource by its API name (cpu in millicores). */
  get(name: string): number {
    switch (name) {
      case 'cpu':
        return this.milliCPU;
      case 'memory':
        return this.memory;
      case 'ephemeral-storage':
        return this.ephemeralStorage;
      case 'pods':
        return this.allowedPodNumber;
      default:
        return this.getScalar(name);
    }
  }
}

/** Extended resources (a domain other than kubernetes.io), hugepages and attachable volumes. */
export function isScalarResourceName(name: string): boolean {
  if (name.startsWith('hugepages-') || name.startsWith('attachable-volumes-')) return true;
  if (name.startsWith('requests.')) return false;
  const slash = name.indexOf('/');
  if (slash < 0) return false;
  const domain = name.slice(0, slash);
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io');
}

/**
 * A container's requests as the scheduler counts them (kube's PodRequests with status
 * resources, in-place resize being on): where its status reports resources, the larger of the
 * spec's and the status's, or the status's alone while the pod's resize is Infeasible (the node
 * keeps the old size).
 */
function requestsOf(
  c: Container,
  status: ContainerStatus | undefined,
  infeasible: boolean,
): Readonly<Record<string, string>> | undefined {
  const spec = c.resources?.requests;
  const resources = status?.resources;
  if (resources === undefined) return spec;
  const reported = resources.requests ?? {};
  if (infeasible) return reported;
  const out: Record<string, string> = { ...spec };
  for (const [name, q] of Object.entries(reported)) {
    const mine = out[name];
    if (mine === undefined || unitOrMilli(name, q) > unitOrMilli(name, mine)) out[name] = q;
  }
  return out;
}

function unitOrMilli(name: string, q: string): number {
  return name === 'cpu' ? milliValue(q) : unitValue(q);
}

function containerRequests(req: Readonly<Record<string, string>> | undefined, nonZero: boolean): Resource {
  const r = new Resource();
  r.addList(req);
  if (nonZero) {
    if (req?.['cpu'] === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (req?.['memory'] === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * The pod's effective requests. With `nonZero`, containers without a cpu or memory request count
 * kube's defaults (100m, 200Mi): what scoring uses so that best-effort pods still spread.
 */
export function podRequests(pod: Pod, nonZero = false): Resource {
  const spec = pod.spec ?? {};
  const status = pod.status;
  const statuses = new Map(
    [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])].map((s) => [s.name, s]),
  );
  const infeasible = status?.conditions?.find((c) => c.type === 'PodResizePending')?.reason === 'Infeasible';
  const requests = (c: Container): Resource =>
    containerRequests(requestsOf(c, statuses.get(c.name ?? ''), infeasible), nonZero);
  const total = new Resource();
  for (const c of spec.containers ?? []) total.add(requests(c));
  const sidecars = new Resource();
  const initPeak = new Resource();
  for (const c of spec.initContainers ?? []) {
    const own = requests(c);
    if (c.restartPolicy === 'Always') {
      total.add(own);
      sidecars.add(own);
      initPeak.max(sidecars);
    } else {
      own.add(sidecars);
      initPeak.max(own);
    }
  }
  total.max(initPeak);
  if (spec.overhead !== undefined) total.addList(spec.overhead);
  return total;
}
