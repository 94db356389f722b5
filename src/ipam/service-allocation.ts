/**
 * What a Service write allocates and releases, kube's service REST `beginCreate`/`beginUpdate`
 * and delete: cluster IPs (one per `ipFamilies` entry, the requested ones honoured or refused
 * with kube's message, none for headless or ExternalName Services), node ports (NodePort and
 * LoadBalancer types) and the health-check node port (LoadBalancer with
 * `externalTrafficPolicy: Local`). Allocations are undone when the write fails; what an update
 * no longer uses is released once it is stored.
 */
import { invalid } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { PendingWrite, ResourceContext, WriteHooks } from '../resource/context.js';
import { isJsonObject, type KubeObject } from '../api/object.js';
import { invalid as fieldInvalid, type FieldError } from '../validation/field-error.js';
import type { IPFamily } from '../api/cidr.js';
import { AllocationError, type ClusterIPAllocator, type ServiceRef } from './cluster-ips.js';
import type { NodePortAllocator } from './node-ports.js';

type Spec = Record<string, unknown>;

function specOf(obj: KubeObject | undefined): Spec {
  const s = obj?.['spec'];
  return isJsonObject(s) ? s : {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function needsClusterIPs(spec: Spec): boolean {
  if (spec['type'] === 'ExternalName') return false;
  return spec['clusterIP'] !== 'None' && strings(spec['clusterIPs'])[0] !== 'None';
}

function needsNodePorts(spec: Spec): boolean {
  const t = spec['type'];
  return t === 'NodePort' || (t === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] !== false);
}

function needsHealthCheckPort(spec: Spec): boolean {
  return spec['type'] === 'LoadBalancer' && spec['externalTrafficPolicy'] === 'Local';
}

function ports(spec: Spec): Record<string, unknown>[] {
  return Array.isArray(spec['ports']) ? spec['ports'].filter(isJsonObject) : [];
}

function nodePortsOf(spec: Spec): number[] {
  const out = ports(spec)
    .map((p) => p['nodePort'])
    .filter((n): n is number => typeof n === 'number' && n !== 0);
  const hc = spec['healthCheckNodePort'];
  if (typeof hc === 'number' && hc !== 0) out.push(hc);
  return out;
}

/** The allocations of one write, to undo or to finish. */
class Allocation implements PendingWrite {
  readonly #ips: ClusterIPAllocator;
  readonly #ports: NodePortAllocator;
  readonly #ctx: ResourceContext;
  readonly #parent: ServiceRef;
  readonly #dryRun: boolean;
  readonly newIPs: string[] = [];
  readonly newPorts: number[] = [];
  releaseIPs: string[] = [];
  releasePorts: number[] = [];

  constructor(
    ctx: ResourceContext,
    ips: ClusterIPAllocator,
    ports: NodePortAllocator,
    parent: ServiceRef,
    dryRun: boolean,
  ) {
    this.#ctx = ctx;
    this.#ips = ips;
    this.#ports = ports;
    this.#parent = parent;
    this.#dryRun = dryRun;
  }

  async commit(): Promise<void> {
    if (this.#dryRun) return;
    for (const ip of this.releaseIPs) await this.#ips.release(this.#ctx, ip, this.#parent);
    for (const port of this.releasePorts) await this.#ports.release(this.#ctx, port, this.#parent);
  }

  async rollback(): Promise<void> {
    if (this.#dryRun) return;
    for (const ip of this.newIPs) await this.#ips.release(this.#ctx, ip, this.#parent);
    for (const port of this.newPorts) await this.#ports.release(this.#ctx, port, this.#parent);
  }
}

/** The write hooks of Services: allocation of cluster IPs and node ports. */
export class ServiceAllocations implements WriteHooks {
  readonly #ips: ClusterIPAllocator;
  readonly #ports: NodePortAllocator;

  constructor(ips: ClusterIPAllocator, ports: NodePortAllocator) {
    this.#ips = ips;
    this.#ports = ports;
  }

  /** The cluster's IP families, primary first. */
  get families(): IPFamily[] {
    return this.#ips.cidrs.map((c) => c.family);
  }

  #applies(type: ResourceType): boolean {
    return type.group === '' && type.kind === 'Service';
  }

  async beginCreate(
    ctx: ResourceContext,
    type: ResourceType,
    obj: KubeObject,
    dryRun: boolean,
  ): Promise<PendingWrite | undefined> {
    if (!this.#applies(type)) return undefined;
    return this.#begin(ctx, obj, undefined, dryRun);
  }

  async beginUpdate(
    ctx: ResourceContext,
    type: ResourceType,
    next: KubeObject,
    current: KubeObject,
    dryRun: boolean,
  ): Promise<PendingWrite | undefined> {
    if (!this.#applies(type)) return undefined;
    return this.#begin(ctx, next, current, dryRun);
  }

  async afterDelete(ctx: ResourceContext, type: ResourceType, obj: KubeObject): Promise<void> {
    if (!this.#applies(type)) return;
    const parent = refOf(obj);
    const spec = specOf(obj);
    for (const ip of strings(spec['clusterIPs'])) if (ip !== 'None') await this.#ips.release(ctx, ip, parent);
    for (const port of nodePortsOf(spec)) await this.#ports.release(ctx, port, parent);
  }

  async #begin(
    ctx: ResourceContext,
    obj: KubeObject,
    old: KubeObject | undefined,
    dryRun: boolean,
  ): Promise<Allocation> {
    const parent = refOf(obj);
    const a = new Allocation(ctx, this.#ips, this.#ports, parent, dryRun);
    const spec = specOf(obj);
    const oldSpec = specOf(old);
    const errs: FieldError[] = [];
    try {
      const oldIPs = old !== undefined && needsClusterIPs(oldSpec) ? strings(oldSpec['clusterIPs']) : [];
      if (needsClusterIPs(spec)) {
        const requested = strings(spec['clusterIPs']);
        const families = strings(spec['ipFamilies']) as IPFamily[];
        const ips: string[] = [];
        for (const [i, family] of families.entries()) {
          const want = requested[i];
          if (want !== undefined && want !== '') {
            if (!oldIPs.includes(want)) {
              try {
                await this.#ips.claim(ctx, want, parent, dryRun);
                a.newIPs.push(want);
              } catch (err) {
                if (!(err instanceof AllocationError)) throw err;
                errs.push(clusterIPsInvalid(requested, err.message));
                break;
              }
            }
            ips.push(want);
          } else {
            const ip = await this.#ips.allocate(ctx, family, parent, dryRun);
            a.newIPs.push(ip);
            ips.push(ip);
          }
        }
        if (errs.length === 0 && ips.length > 0) {
          spec['clusterIPs'] = ips;
          spec['clusterIP'] = ips[0];
        }
        a.releaseIPs = oldIPs.filter((ip) => !ips.includes(ip));
      } else {
        a.releaseIPs = oldIPs;
      }
      const oldPorts = old === undefined ? [] : nodePortsOf(oldSpec);
      const kept: number[] = [];
      if (needsNodePorts(spec)) {
        // One allocation per distinct number: ports of different protocols may share one.
        const byNumber = new Map<number, boolean>();
        for (const [i, p] of ports(spec).entries()) {
          const given = typeof p['nodePort'] === 'number' ? p['nodePort'] : 0;
          if (given === 0) {
            const port = await this.#ports.allocate(ctx, parent, dryRun);
            a.newPorts.push(port);
            p['nodePort'] = port;
            kept.push(port);
            continue;
          }
          kept.push(given);
          if (oldPorts.includes(given) || byNumber.has(given)) continue;
          byNumber.set(given, true);
          try {
            await this.#ports.claim(ctx, given, parent, dryRun);
            a.newPorts.push(given);
          } catch (err) {
            if (!(err instanceof AllocationError)) throw err;
            errs.push(fieldInvalid(`spec.ports[${i}].nodePort`, given, err.message));
          }
        }
      }
      if (needsHealthCheckPort(spec)) {
        const given = typeof spec['healthCheckNodePort'] === 'number' ? spec['healthCheckNodePort'] : 0;
        if (given === 0) {
          const port = await this.#ports.allocate(ctx, parent, dryRun);
          a.newPorts.push(port);
          spec['healthCheckNodePort'] = port;
          kept.push(port);
        } else {
          kept.push(given);
          if (!oldPorts.includes(given)) {
            try {
              await this.#ports.claim(ctx, given, parent, dryRun);
              a.newPorts.push(given);
            } catch (err) {
              if (!(err instanceof AllocationError)) throw err;
              errs.push(fieldInvalid('spec.healthCheckNodePort', given, err.message));
            }
          }
        }
      }
      a.releasePorts = oldPorts.filter((p) => !kept.includes(p));
    } catch (err) {
      await a.rollback();
      throw err;
    }
    if (errs.length > 0) {
      await a.rollback();
      throw invalid('Service', '', obj.metadata.name ?? '', errs);
    }
    return a;
  }
}

/** kube's error for requested cluster IPs; the value printed as Go prints a `[]string`. */
function clusterIPsInvalid(requested: readonly string[], detail: string): FieldError {
  const value = `[]string{${requested.map((ip) => JSON.stringify(ip)).join(', ')}}`;
  return {
    field: 'spec.clusterIPs',
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${value}: ${detail}`,
  };
}

function refOf(obj: KubeObject): ServiceRef {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}
