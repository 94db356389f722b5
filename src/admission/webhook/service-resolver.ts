/**
 * Where a webhook's `service` reference is reached. Capstan has no kube-proxy, so a Service's
 * ClusterIP leads nowhere: like kube-apiserver with `--enable-aggregator-routing`, the call goes
 * to a ready endpoint of the Service, read from its EndpointSlices (`kubernetes.io/service-name`)
 * or, when it has none, its Endpoints. The Service port is found by number, the endpoint port by
 * the Service port's name. Errors carry kube's messages (`no endpoints available for service
 * "x"`, ...).
 */
import type { JsonObject, KubeObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';

/** A resolved address. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** The objects the resolver reads (informer-backed lookups). */
export interface ServiceObjects {
  service(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** The EndpointSlices of a namespace labelled `kubernetes.io/service-name=<service>`. */
  endpointSlices(namespace: string, service: string): Promise<readonly KubeObject[]>;
  endpoints(namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** A resolution failure; the message is kube's. */
export class ResolveError extends Error {}

function objects(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

function pick<T>(items: readonly T[]): T | undefined {
  return items[Math.floor(Math.random() * items.length)];
}

/** Resolves `service` `namespace/name` port `port` to a ready endpoint. @throws ResolveError */
export async function resolveServiceEndpoint(
  objectsOf: ServiceObjects,
  namespace: string,
  name: string,
  port: number,
): Promise<Endpoint> {
  const svc = await objectsOf.service(namespace, name);
  if (svc === undefined) throw new ResolveError(`service "${name}" not found`);
  const spec = isJsonObject(svc['spec']) ? svc['spec'] : {};
  const type = typeof spec['type'] === 'string' ? spec['type'] : 'ClusterIP';
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer')
    throw new ResolveError(`unsupported service type ${JSON.stringify(type)}`);
  const svcPort = objects(spec['ports']).find((p) => p['port'] === port);
  if (svcPort === undefined)
    throw new ResolveError(`no service port ${port} found for service ${JSON.stringify(name)}`);
  const portName = typeof svcPort['name'] === 'string' ? svcPort['name'] : '';

  const slices = await objectsOf.endpointSlices(namespace, name);
  if (slices.length > 0) {
    const candidates: Endpoint[] = [];
    for (const slice of slices) {
      const p = objects(slice['ports']).find(
        (x) => (typeof x['name'] === 'string' ? x['name'] : '') === portName,
      );
      if (p === undefined || typeof p['port'] !== 'number') continue;
      for (const ep of objects(slice['endpoints'])) {
        const conditions = isJsonObject(ep['conditions']) ? ep['conditions'] : {};
        if (conditions['ready'] === false) continue;
        const addresses: unknown = ep['addresses'];
        const address: unknown = Array.isArray(addresses) ? (addresses as unknown[])[0] : undefined;
        if (typeof address === 'string') candidates.push({ host: address, port: p['port'] });
      }
    }
    const chosen = pick(candidates);
    if (chosen !== undefined) return chosen;
    throw new ResolveError(`no endpoints available for service ${JSON.stringify(name)}`);
  }

  const eps = await objectsOf.endpoints(namespace, name);
  if (eps === undefined) throw new ResolveError(`endpoints "${name}" not found`);
  const subsets = objects(eps['subsets']);
  const candidates: Endpoint[] = [];
  for (const ss of subsets) {
    const p = objects(ss['ports']).find((x) => (typeof x['name'] === 'string' ? x['name'] : '') === portName);
    if (p === undefined || typeof p['port'] !== 'number') continue;
    for (const a of objects(ss['addresses'])) {
      if (typeof a['ip'] === 'string') candidates.push({ host: a['ip'], port: p['port'] });
    }
  }
  const chosen = pick(candidates);
  if (chosen !== undefined) return chosen;
  throw new ResolveError(`no endpoints available for service ${JSON.stringify(name)}`);
}
