/**
 * What an object counts against a ResourceQuota (kube's quota evaluators): `count/<resource>`
 * for every namespaced kind, the legacy object counts (`pods`, `services`, `configmaps`,
 * `secrets`, `persistentvolumeclaims`, `replicationcontrollers`, `resourcequotas`), pod compute
 * resources (`requests.*`, `limits.*`, `cpu`, `memory`), PVC storage (also per storage class)
 * and Service load balancers and node ports; and which quotas' scopes match a pod.
 */
import { isJsonObject, type JsonObject } from '../object.js';
import { addQuantities, addResources, maxResources, resourcesOf, type Resources } from './quantities.js';
import type { Quantity } from '../quantity.js';

const ONE: Quantity = { mantissa: 1n, exp: 0, format: 'DecimalSI' };
const int = (n: number): Quantity => ({ mantissa: BigInt(n), exp: 0, format: 'DecimalSI' });

/** The legacy count name of a core kind. */
const LEGACY_COUNTS: Readonly<Record<string, string>> = {
  Pod: 'pods',
  Service: 'services',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  ReplicationController: 'replicationcontrollers',
  ResourceQuota: 'resourcequotas',
};

/** A kind as the usage functions need it. */
export interface UsageKind {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
}

/** `count/<plural>` (core) or `count/<plural>.<group>`. */
export function countName(k: UsageKind): string {
  return k.group === '' ? `count/${k.plural}` : `count/${k.plural}.${k.group}`;
}

const spec = (o: JsonObject): JsonObject => (isJsonObject(o['spec']) ? o['spec'] : {});
const list = (v: unknown): JsonObject[] =>
  Array.isArray(v) ? v.filter((x): x is JsonObject => isJsonObject(x)) : [];

/** kube's `QuotaV1Pod`: pods in a terminal phase (or past their deletion grace) count no resources. */
function podCounts(pod: JsonObject): boolean {
  const phase = isJsonObject(pod['status']) ? pod['status']['phase'] : undefined;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** A container's requests or limits. */
function containerResources(c: JsonObject, which: 'requests' | 'limits'): Resources {
  const r = isJsonObject(c['resources']) ? c['resources'] : {};
  return resourcesOf(r[which]);
}

/**
 * The pod's effective requests or limits (kube's PodRequests and PodLimits): the app containers'
 * sum with the sidecars' (init containers with `restartPolicy: Always`, which run beside them),
 * or an init container's peak if higher (a regular init container runs beside the sidecars
 * started before it), plus the overhead.
 */
export function podResources(pod: JsonObject, which: 'requests' | 'limits'): Resources {
  const s = spec(pod);
  let sum: Resources = new Map();
  for (const c of list(s['containers'])) sum = addResources(sum, containerResources(c, which));
  let sidecars: Resources = new Map();
  let initPeak: Resources = new Map();
  for (const c of list(s['initContainers'])) {
    const own = containerResources(c, which);
    if (c['restartPolicy'] === 'Always') {
      sum = addResources(sum, own);
      sidecars = addResources(sidecars, own);
      initPeak = maxResources(initPeak, sidecars);
    } else {
      initPeak = maxResources(initPeak, addResources(own, sidecars));
    }
  }
  sum = maxResources(sum, initPeak);
  const overhead = resourcesOf(s['overhead']);
  if (overhead.size > 0) sum = addResources(sum, overhead);
  return sum;
}

/** Usage of a pod's compute resources. */
function podUsage(pod: JsonObject): Resources {
  const out: Resources = new Map();
  if (!podCounts(pod)) return out;
  out.set('pods', ONE);
  const requests = podResources(pod, 'requests');
  const limits = podResources(pod, 'limits');
  for (const [k, v] of requests) {
    out.set(`requests.${k}`, v);
    if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') out.set(k, v);
  }
  for (const [k, v] of limits) out.set(`limits.${k}`, v);
  return out;
}

function serviceUsage(svc: JsonObject): Resources {
  const out: Resources = new Map([['services', ONE]]);
  const s = spec(svc);
  const ports = list(s['ports']).length;
  if (s['type'] === 'LoadBalancer') {
    out.set('services.loadbalancers', ONE);
    out.set('services.nodeports', int(ports));
  } else if (s['type'] === 'NodePort') out.set('services.nodeports', int(ports));
  else out.set('services.nodeports', int(0));
  return out;
}

function pvcUsage(pvc: JsonObject): Resources {
  const out: Resources = new Map([['persistentvolumeclaims', ONE]]);
  const s = spec(pvc);
  const storage = resourcesOf(isJsonObject(s['resources']) ? s['resources']['requests'] : undefined).get(
    'storage',
  );
  const sc = typeof s['storageClassName'] === 'string' ? s['storageClassName'] : '';
  if (sc !== '') out.set(`${sc}.storageclass.storage.k8s.io/persistentvolumeclaims`, ONE);
  if (storage !== undefined) {
    out.set('requests.storage', storage);
    if (sc !== '') out.set(`${sc}.storageclass.storage.k8s.io/requests.storage`, storage);
  }
  return out;
}

/** Everything `obj` of kind `k` counts against quotas. */
export function usageOf(k: UsageKind, obj: JsonObject): Resources {
  let out: Resources = new Map([[countName(k), ONE]]);
  if (k.group !== '') return out;
  const legacy = LEGACY_COUNTS[k.kind];
  if (legacy !== undefined) out.set(legacy, ONE);
  if (k.kind === 'Pod') {
    out = new Map([[countName(k), ONE], ...podUsage(obj)]);
  } else if (k.kind === 'Service') out = new Map([...out, ...serviceUsage(obj)]);
  else if (k.kind === 'PersistentVolumeClaim') out = new Map([...out, ...pvcUsage(obj)]);
  return out;
}

/** Sums the usage of many objects of one kind. */
export function sumUsage(k: UsageKind, objects: readonly JsonObject[]): Resources {
  let out: Resources = new Map();
  for (const o of objects) {
    for (const [r, q] of usageOf(k, o))
      out.set(r, addQuantities(out.get(r) ?? { mantissa: 0n, exp: 0, format: q.format }, q));
  }
  out = new Map(out);
  return out;
}

/** Compute resources whose quota makes each container name its own value (kube's `validationSet`). */
const CONSTRAINED = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/**
 * kube's pod `Constraints`: a quota on cpu or memory requires every container to state it.
 * Returns kube's `must specify ...` text, or undefined.
 */
export function podConstraints(pod: JsonObject, restricted: readonly string[]): string | undefined {
  const required = restricted.filter((r) => CONSTRAINED.includes(r));
  if (required.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  const s = spec(pod);
  for (const c of [...list(s['containers']), ...list(s['initContainers'])]) {
    const requests = containerResources(c, 'requests');
    const limits = containerResources(c, 'limits');
    for (const r of required) {
      const has = r.startsWith('limits.') ? limits.has(r.slice(7)) : requests.has(r.replace('requests.', ''));
      if (!has) {
        const names = missing.get(r) ?? new Set<string>();
        names.add(typeof c['name'] === 'string' ? c['name'] : '');
        missing.set(r, names);
      }
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()]
    .sort()
    .map((r) => `${r} for: ${[...(missing.get(r) ?? [])].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

/** True when a pod is BestEffort (no cpu/memory requests or limits anywhere). */
function bestEffort(pod: JsonObject): boolean {
  const s = spec(pod);
  for (const c of [...list(s['containers']), ...list(s['initContainers'])]) {
    for (const which of ['requests', 'limits'] as const) {
      const r = containerResources(c, which);
      if (r.has('cpu') || r.has('memory')) return false;
    }
  }
  return true;
}

/** One scope requirement (`spec.scopes` entries become `Exists` requirements). */
interface ScopeRequirement {
  readonly scopeName: string;
  readonly operator: string;
  readonly values: readonly string[];
}

function scopeRequirements(quota: JsonObject): ScopeRequirement[] {
  const s = spec(quota);
  const out: ScopeRequirement[] = [];
  for (const name of Array.isArray(s['scopes']) ? (s['scopes'] as unknown[]) : []) {
    out.push({ scopeName: String(name), operator: 'Exists', values: [] });
  }
  const selector = isJsonObject(s['scopeSelector']) ? s['scopeSelector'] : {};
  for (const e of list(selector['matchExpressions'])) {
    out.push({
      scopeName: typeof e['scopeName'] === 'string' ? e['scopeName'] : '',
      operator: typeof e['operator'] === 'string' ? e['operator'] : '',
      values: Array.isArray(e['values']) ? (e['values'] as unknown[]).map(String) : [],
    });
  }
  return out;
}

function podMatchesScope(pod: JsonObject, r: ScopeRequirement): boolean {
  const s = spec(pod);
  switch (r.scopeName) {
    case 'Terminating':
      return typeof s['activeDeadlineSeconds'] === 'number';
    case 'NotTerminating':
      return typeof s['activeDeadlineSeconds'] !== 'number';
    case 'BestEffort':
      return bestEffort(pod);
    case 'NotBestEffort':
      return !bestEffort(pod);
    case 'PriorityClass': {
      const pc = typeof s['priorityClassName'] === 'string' ? s['priorityClassName'] : '';
      if (r.operator === 'Exists') return pc !== '';
      if (r.operator === 'DoesNotExist') return pc === '';
      if (r.operator === 'In') return r.values.includes(pc);
      if (r.operator === 'NotIn') return !r.values.includes(pc);
      return false;
    }
    default:
      return false;
  }
}

/** kube's `Matches`: a scoped quota counts only pods its scopes select; unscoped ones count everything. */
export function quotaSelects(quota: JsonObject, k: UsageKind, obj: JsonObject): boolean {
  const reqs = scopeRequirements(quota);
  if (reqs.length === 0) return true;
  if (k.group !== '' || k.kind !== 'Pod') return false;
  return reqs.every((r) => podMatchesScope(obj, r));
}
