/**
 * The Service fields kube-apiserver settles between defaulting and validation (in the Service
 * REST storage, not the defaulters): `clusterIP`/`clusterIPs` kept in sync, `ipFamilyPolicy`
 * and `ipFamilies` inferred for the cluster's configured families, and on update the
 * allocated values (cluster IPs, node ports, health-check port) carried over when a full
 * replacement omits them, and the fields a type change leaves without use wiped.
 *
 * Allocating cluster IPs and node ports stays with the allocator; this only decides families.
 */
import { invalid, type FieldError } from '../validation/field-error.js';
import { isIPv6String } from '../validation/formats.js';
import { isObject, num, str, strings } from '../validation/json.js';
import { nonEmpty, objectAt, type JsonObject } from './mutate.js';

/** An IP family. */
export type IPFamily = 'IPv4' | 'IPv6';

function needsClusterIP(spec: JsonObject): boolean {
  return str(spec, 'type') !== 'ExternalName';
}

function needsNodePort(spec: JsonObject): boolean {
  const t = str(spec, 'type');
  return t === 'NodePort' || (t === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] !== false);
}

function needsHealthCheckPort(spec: JsonObject): boolean {
  return str(spec, 'type') === 'LoadBalancer' && str(spec, 'externalTrafficPolicy') === 'Local';
}

/** kube's `patchAllocatedValues`: keep what the allocator assigned when an update omits it. */
function patchAllocatedValues(spec: JsonObject, old: JsonObject): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if (str(spec, 'clusterIP') === '' && str(old, 'clusterIP') !== '') spec['clusterIP'] = old['clusterIP'];
    if (!nonEmpty(spec, 'clusterIPs') && nonEmpty(old, 'clusterIPs'))
      spec['clusterIPs'] = [...strings(old, 'clusterIPs')];
  }
  if (needsNodePort(old) && needsNodePort(spec)) {
    const ports = (v: JsonObject): JsonObject[] =>
      Array.isArray(v['ports']) ? v['ports'].filter(isObject) : [];
    const usedNew = new Set(ports(spec).map((p) => num(p, 'nodePort') ?? 0));
    const byName = new Map(ports(old).map((p) => [str(p, 'name'), num(p, 'nodePort') ?? 0]));
    for (const p of ports(spec)) {
      if ((num(p, 'nodePort') ?? 0) !== 0) continue;
      const previous = byName.get(str(p, 'name')) ?? 0;
      if (previous !== 0 && !usedNew.has(previous)) p['nodePort'] = previous;
    }
  }
  if (
    needsHealthCheckPort(old) &&
    needsHealthCheckPort(spec) &&
    (num(spec, 'healthCheckNodePort') ?? 0) === 0
  ) {
    if (old['healthCheckNodePort'] !== undefined) spec['healthCheckNodePort'] = old['healthCheckNodePort'];
  }
}

/** kube's `normalizeClusterIPs`: a singular `clusterIP` seeds `clusterIPs` (and back on update). */
function normalizeClusterIPs(spec: JsonObject, old: JsonObject | undefined): void {
  const ip = str(spec, 'clusterIP');
  const ips = strings(spec, 'clusterIPs');
  if (old === undefined) {
    if (ip !== '' && ips.length === 0) spec['clusterIPs'] = [ip];
    return;
  }
  const oldIP = str(old, 'clusterIP');
  const oldIPs = strings(old, 'clusterIPs');
  const sameIPs = ips.length === oldIPs.length && ips.every((v, i) => v === oldIPs[i]);
  if (ip !== oldIP && sameIPs) {
    // The singular field changed and the plural did not: follow the singular.
    if (ip === '') delete spec['clusterIPs'];
    else if (ips.length <= 1) spec['clusterIPs'] = [ip];
    else spec['clusterIPs'] = [ip, ...ips.slice(1)];
  } else if (ip === oldIP && !sameIPs && ips.length > 0 && ip === '') {
    spec['clusterIP'] = ips[0];
  }
}

function other(f: IPFamily): IPFamily {
  return f === 'IPv4' ? 'IPv6' : 'IPv4';
}

/**
 * kube's `initIPFamilyFields`: infers `ipFamilyPolicy` (SingleStack; RequireDualStack for
 * headless services without a selector; the old policy on update) and `ipFamilies` (from the
 * cluster IPs given, else the cluster's first family, plus the second one for dual-stack
 * policies when the cluster has two).
 *
 * @param clusterFamilies The families of `--service-cluster-ip-range`, primary first.
 * @returns Errors kube reports at this point (a family the cluster does not serve).
 */
function initIPFamilyFields(
  spec: JsonObject,
  old: JsonObject | undefined,
  clusterFamilies: readonly IPFamily[],
): FieldError[] {
  if (str(spec, 'type') === 'ExternalName') return [];
  const headlessSelectorless = str(spec, 'clusterIP') === 'None' && !nonEmpty(spec, 'selector');
  if (spec['ipFamilyPolicy'] === undefined || spec['ipFamilyPolicy'] === null) {
    if (old !== undefined && typeof old['ipFamilyPolicy'] === 'string')
      spec['ipFamilyPolicy'] = old['ipFamilyPolicy'];
    else spec['ipFamilyPolicy'] = headlessSelectorless ? 'RequireDualStack' : 'SingleStack';
  }
  const policy = spec['ipFamilyPolicy'];
  const errs: FieldError[] = [];
  const families = strings(spec, 'ipFamilies') as IPFamily[];
  strings(spec, 'clusterIPs').forEach((ip, i) => {
    if (ip === 'None' || i < families.length) return;
    const fam: IPFamily = isIPv6String(ip) ? 'IPv6' : 'IPv4';
    if (clusterFamilies.includes(fam)) families.push(fam);
    else
      errs.push(
        invalid(
          `spec.clusterIPs[${i}]`,
          strings(spec, 'clusterIPs'),
          `${fam} is not configured on this cluster`,
        ),
      );
  });
  const primary = clusterFamilies[0] ?? 'IPv4';
  if (headlessSelectorless) {
    if (families.length === 0) families.push(primary);
    const first = families[0] ?? primary;
    if (families.length < 2 && policy !== 'SingleStack') families.push(other(first));
    spec['ipFamilies'] = families;
    return errs;
  }
  if (policy === 'RequireDualStack' && clusterFamilies.length < 2) {
    errs.push(
      invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'),
    );
  }
  families.forEach((f, i) => {
    if (!clusterFamilies.includes(f))
      errs.push(invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
  });
  if (errs.length > 0) return errs;
  if (families.length === 0) families.push(primary);
  const first = families[0] ?? primary;
  if (policy !== 'SingleStack' && families.length === 1 && clusterFamilies.length === 2)
    families.push(other(first));
  spec['ipFamilies'] = families;
  return errs;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function nodePortSet(spec: JsonObject): string {
  const ports = Array.isArray(spec['ports']) ? spec['ports'].filter(isObject) : [];
  const set = new Set(ports.map((p) => num(p, 'nodePort') ?? 0).filter((n) => n !== 0));
  return [...set].sort((a, b) => a - b).join(',');
}

/** kube's `ExternallyAccessible`: NodePort, LoadBalancer, or a ClusterIP with external IPs. */
function externallyAccessible(spec: JsonObject): boolean {
  const t = str(spec, 'type');
  return t === 'NodePort' || t === 'LoadBalancer' || (t === 'ClusterIP' && nonEmpty(spec, 'externalIPs'));
}

/**
 * kube's `dropTypeDependentFields` (the Service strategy's update): a type change wipes the
 * fields the new type has no use for, when the update left them as they were (a change the user
 * made is left for validation to judge): the cluster IPs, IP families and policy when it no
 * longer needs a cluster IP (ExternalName); node ports, the health-check node port,
 * `allocateLoadBalancerNodePorts`, `loadBalancerClass` and `externalTrafficPolicy` when it no
 * longer uses them; and the load balancer's status unless it is a LoadBalancer.
 */
function dropTypeDependentFields(svc: JsonObject, spec: JsonObject, old: JsonObject): void {
  const type = str(spec, 'type');
  const oldType = str(old, 'type');
  if (needsClusterIP(old) && !needsClusterIP(spec)) {
    if (str(spec, 'clusterIP') === str(old, 'clusterIP') && sameJson(spec['clusterIPs'], old['clusterIPs'])) {
      delete spec['clusterIP'];
      delete spec['clusterIPs'];
    }
    if (sameJson(spec['ipFamilies'], old['ipFamilies'])) delete spec['ipFamilies'];
    if (str(spec, 'ipFamilyPolicy') === str(old, 'ipFamilyPolicy')) delete spec['ipFamilyPolicy'];
  }
  const usesNodePorts = (t: string): boolean => t === 'NodePort' || t === 'LoadBalancer';
  if (usesNodePorts(oldType) && !usesNodePorts(type) && nodePortSet(spec) === nodePortSet(old)) {
    const ports = Array.isArray(spec['ports']) ? spec['ports'].filter(isObject) : [];
    for (const p of ports) delete p['nodePort'];
  }
  if (
    needsHealthCheckPort(old) &&
    !needsHealthCheckPort(spec) &&
    (num(spec, 'healthCheckNodePort') ?? 0) === (num(old, 'healthCheckNodePort') ?? 0)
  ) {
    delete spec['healthCheckNodePort'];
  }
  if (oldType === 'LoadBalancer' && type !== 'LoadBalancer') {
    const now = spec['allocateLoadBalancerNodePorts'];
    if (typeof now === 'boolean' && now === old['allocateLoadBalancerNodePorts'])
      delete spec['allocateLoadBalancerNodePorts'];
    if (sameJson(spec['loadBalancerClass'], old['loadBalancerClass'])) delete spec['loadBalancerClass'];
  }
  if (
    externallyAccessible(old) &&
    !externallyAccessible(spec) &&
    str(spec, 'externalTrafficPolicy') === str(old, 'externalTrafficPolicy')
  ) {
    delete spec['externalTrafficPolicy'];
  }
  const status = objectAt(svc, 'status');
  if (type !== 'LoadBalancer' && status !== undefined) status['loadBalancer'] = {};
}

/**
 * Settles a Service's IP fields before validation, on create (`old` undefined) or update.
 *
 * @param clusterFamilies Served IP families, primary first (single-stack IPv4 by default).
 */
export function prepareServiceIPs(
  svc: JsonObject,
  old: JsonObject | undefined,
  clusterFamilies: readonly IPFamily[],
): FieldError[] {
  const spec = objectAt(svc, 'spec');
  if (spec === undefined) return [];
  const oldSpec = objectAt(old, 'spec');
  if (oldSpec !== undefined) patchAllocatedValues(spec, oldSpec);
  normalizeClusterIPs(spec, oldSpec);
  const errs = initIPFamilyFields(spec, oldSpec, clusterFamilies);
  if (oldSpec !== undefined) dropTypeDependentFields(svc, spec, oldSpec);
  return errs;
}
