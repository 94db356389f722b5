/**
 * The cluster zone: what kube's DNS specification says `<service>.<ns>.svc.<zone>`,
 * `<hostname>.<service>.<ns>.svc.<zone>`, `_<port>._<proto>.<service>.<ns>.svc.<zone>`,
 * `<a-b-c-d>.<ns>.pod.<zone>`, `dns-version.<zone>` and the reverse names answer, from the
 * Services and EndpointSlices it is handed (cluster-dns.ts feeds it from informers).
 *
 * Answers are computed per query from the current objects (a service's records are a scan of
 * its slices); the reverse map is rebuilt lazily after a change. Names that exist only as a
 * prefix of others (`<ns>.svc.<zone>`) answer NOERROR with no records, as any DNS server does
 * for an empty non-terminal; names that do not exist answer NXDOMAIN. Both carry the zone's SOA.
 */
import type { Answer } from 'dns-packet';
import { isIPv4, isIPv6 } from 'node:net';
import type { EndpointSlice } from '../api/types/discovery-v1.js';
import type { Service } from '../api/types/core-v1.js';
import { dashedIp, ipv4OfDashed, normalizeName, reverseName } from './names.js';

/** Record types the zone answers; anything else in the zone is NODATA. */
export type QueryType = 'A' | 'AAAA' | 'SRV' | 'PTR' | 'TXT' | 'CNAME' | 'SOA' | 'NS' | 'ANY';

/** The outcome of a lookup in the zone. */
export interface ZoneAnswer {
  /** 0 NOERROR, 3 NXDOMAIN. */
  readonly rcode: 0 | 3;
  readonly answers: Answer[];
  readonly additionals: Answer[];
  /** The SOA, on negative answers. */
  readonly authorities: Answer[];
}

/** The version of kube's DNS specification served at `dns-version.<zone>`. */
export const DNS_SCHEMA_VERSION = '1.1.0';

/** CoreDNS's `ttl` in kube's default Corefile. */
export const DEFAULT_TTL = 30;

interface Endpoint {
  readonly ip: string;
  readonly hostname?: string;
  readonly ready: boolean;
  readonly ports: readonly { name: string; port: number; protocol: string }[];
}

/** The records of one cluster domain. */
export class ClusterZone {
  readonly #zone: string;
  readonly #ttl: number;
  readonly #services = new Map<string, Service>();
  readonly #slices = new Map<string, Map<string, EndpointSlice>>();
  #reverse: Map<string, string[]> | undefined;
  #version = 0;

  constructor(zone = 'cluster.local', ttl = DEFAULT_TTL) {
    this.#zone = normalizeName(zone);
    this.#ttl = ttl;
  }

  get zone(): string {
    return this.#zone;
  }

  /** Counts the changes to the zone's records: an answer computed at one version holds until it moves. */
  get version(): number {
    return this.#version;
  }

  /** True when `name` (normalised) is in this zone or in a reverse zone this server answers. */
  owns(name: string): boolean {
    return name === this.#zone || name.endsWith(`.${this.#zone}`) || this.#reverseNames().has(name);
  }

  setService(svc: Service): void {
    const ns = svc.metadata.namespace ?? '';
    this.#services.set(`${ns}/${svc.metadata.name ?? ''}`, svc);
    this.#reverse = undefined;
    this.#version++;
  }

  deleteService(svc: Service): void {
    this.#services.delete(`${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`);
    this.#reverse = undefined;
    this.#version++;
  }

  setSlice(slice: EndpointSlice): void {
    const owner = this.#sliceOwner(slice);
    if (owner === undefined) return;
    let m = this.#slices.get(owner);
    if (m === undefined) this.#slices.set(owner, (m = new Map<string, EndpointSlice>()));
    m.set(slice.metadata.name ?? '', slice);
    this.#reverse = undefined;
    this.#version++;
  }

  deleteSlice(slice: EndpointSlice): void {
    const owner = this.#sliceOwner(slice);
    if (owner === undefined) return;
    const m = this.#slices.get(owner);
    m?.delete(slice.metadata.name ?? '');
    if (m?.size === 0) this.#slices.delete(owner);
    this.#reverse = undefined;
    this.#version++;
  }

  #sliceOwner(slice: EndpointSlice): string | undefined {
    const svc = slice.metadata.labels?.['kubernetes.io/service-name'];
    return svc === undefined ? undefined : `${slice.metadata.namespace ?? ''}/${svc}`;
  }

  /** Answers `qname` (as asked: the answer names echo it) of `type`. */
  lookup(qname: string, type: QueryType): ZoneAnswer {
    const name = normalizeName(qname);
    if (!name.endsWith(`.${this.#zone}`) && name !== this.#zone)
      return this.#lookupReverse(qname, name, type);
    if (name === this.#zone) {
      return type === 'SOA' || type === 'ANY' ? this.#found([this.#soa()]) : this.#nodata();
    }
    const labels = name.slice(0, -this.#zone.length - 1).split('.');
    const last = labels[labels.length - 1];
    if (labels.length === 1 && last === 'dns-version') {
      return type === 'TXT' || type === 'ANY'
        ? this.#found([{ name: qname, type: 'TXT', ttl: this.#ttl, class: 'IN', data: DNS_SCHEMA_VERSION }])
        : this.#nodata();
    }
    if (last === 'svc') return this.#lookupSvc(qname, labels.slice(0, -1), type);
    if (last === 'pod') return this.#lookupPod(qname, labels.slice(0, -1), type);
    return this.#nxdomain();
  }

  #lookupSvc(qname: string, labels: string[], type: QueryType): ZoneAnswer {
    if (labels.length === 0) return this.#services.size > 0 ? this.#nodata() : this.#nxdomain();
    if (labels.length === 1) {
      const ns = labels[0];
      return [...this.#services.values()].some((s) => s.metadata.namespace === ns)
        ? this.#nodata()
        : this.#nxdomain();
    }
    const [ns = '', svcName = ''] = [labels[labels.length - 1], labels[labels.length - 2]];
    const svc = this.#services.get(`${ns}/${svcName}`);
    if (svc === undefined) return this.#nxdomain();
    const base = `${svcName}.${ns}.svc.${this.#zone}`;
    if (labels.length === 2) return this.#serviceRecords(qname, svc, base, type);
    if (labels.length === 3) {
      const label = labels[0] ?? '';
      if (label.startsWith('_')) return this.#nodata(); // `_tcp.<svc>...`: an empty non-terminal if ports exist
      const ep = this.#endpoints(svc).find((e) => this.#endpointLabel(e) === label);
      if (ep === undefined) return this.#nxdomain();
      return this.#addressAnswer(qname, [ep.ip], type);
    }
    if (labels.length === 4 && labels[0]?.startsWith('_') && labels[1]?.startsWith('_')) {
      const port = labels[0].slice(1);
      const proto = labels[1].slice(1);
      const srv = this.#srv(svc, base, (p) => p.name === port && p.protocol === proto);
      if (srv.answers.length === 0) return this.#nxdomain();
      return type === 'SRV' || type === 'ANY' ? this.#found(srv.answers, srv.additionals) : this.#nodata();
    }
    return this.#nxdomain();
  }

  #serviceRecords(qname: string, svc: Service, base: string, type: QueryType): ZoneAnswer {
    const spec = svc.spec ?? {};
    if (spec.type === 'ExternalName') {
      const target = spec.externalName ?? '';
      if (target === '') return this.#nodata();
      return this.#found([
        { name: qname, type: 'CNAME', ttl: this.#ttl, class: 'IN', data: normalizeName(target) },
      ]);
    }
    if (type === 'SRV') {
      const srv = this.#srv(svc, base, () => true);
      return srv.answers.length === 0 ? this.#nodata() : this.#found(srv.answers, srv.additionals);
    }
    return this.#addressAnswer(qname, this.#serviceIps(svc), type);
  }

  /** The ClusterIPs of a service, or its ready endpoints' addresses when headless. */
  #serviceIps(svc: Service): string[] {
    const spec = svc.spec ?? {};
    if (spec.clusterIP === 'None') return this.#endpoints(svc).map((e) => e.ip);
    const ips = spec.clusterIPs ?? (spec.clusterIP === undefined ? [] : [spec.clusterIP]);
    return ips.filter((ip) => ip !== '' && ip !== 'None');
  }

  #srv(
    svc: Service,
    base: string,
    match: (p: { name: string; protocol: string }) => boolean,
  ): { answers: Answer[]; additionals: Answer[] } {
    const answers: Answer[] = [];
    const additionals: Answer[] = [];
    const headless = svc.spec?.clusterIP === 'None';
    if (!headless) {
      const ports = (svc.spec?.ports ?? []).map((p) => ({
        name: (p.name ?? '').toLowerCase(),
        port: p.port ?? 0,
        protocol: (p.protocol ?? 'TCP').toLowerCase(),
      }));
      for (const p of ports.filter((q) => q.name !== '' && match(q))) {
        answers.push(this.#srvRecord(`_${p.name}._${p.protocol}.${base}`, p.port, base, 1));
      }
      if (answers.length > 0)
        additionals.push(...this.#addressAnswer(base, this.#serviceIps(svc), 'ANY').answers);
      return { answers, additionals };
    }
    const eps = this.#endpoints(svc);
    for (const ep of eps) {
      const target = `${this.#endpointLabel(ep)}.${base}`;
      let used = false;
      for (const p of ep.ports.filter((q) => q.name !== '' && match(q))) {
        answers.push(this.#srvRecord(`_${p.name}._${p.protocol}.${base}`, p.port, target, eps.length));
        used = true;
      }
      if (used) additionals.push(...this.#addressAnswer(target, [ep.ip], 'ANY').answers);
    }
    return { answers, additionals };
  }

  #srvRecord(name: string, port: number, target: string, count: number): Answer {
    const weight = Math.max(1, Math.floor(100 / Math.max(1, count)));
    return { name, type: 'SRV', ttl: this.#ttl, class: 'IN', data: { priority: 0, weight, port, target } };
  }

  #endpointLabel(ep: Endpoint): string {
    return ep.hostname ?? dashedIp(ep.ip);
  }

  /** The endpoints DNS names: ready ones, or all when the service publishes not-ready addresses. */
  #endpoints(svc: Service): Endpoint[] {
    const slices = this.#slices.get(`${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`);
    if (slices === undefined) return [];
    const all = svc.spec?.publishNotReadyAddresses === true;
    const out: Endpoint[] = [];
    const seen = new Set<string>();
    for (const slice of slices.values()) {
      const ports = (slice.ports ?? []).map((p) => ({
        name: (p.name ?? '').toLowerCase(),
        port: p.port ?? 0,
        protocol: (p.protocol ?? 'TCP').toLowerCase(),
      }));
      for (const e of slice.endpoints ?? []) {
        const ready = e.conditions?.ready !== false;
        if (!ready && !all) continue;
        for (const ip of e.addresses ?? []) {
          if (seen.has(ip)) continue;
          seen.add(ip);
          out.push(
            e.hostname === undefined ? { ip, ready, ports } : { ip, hostname: e.hostname, ready, ports },
          );
        }
      }
    }
    return out;
  }

  #lookupPod(qname: string, labels: string[], type: QueryType): ZoneAnswer {
    if (labels.length === 1) return this.#nodata();
    if (labels.length !== 2) return this.#nxdomain();
    const ip = ipv4OfDashed(labels[0] ?? '');
    if (ip === undefined) return this.#nxdomain();
    return this.#addressAnswer(qname, [ip], type);
  }

  #addressAnswer(qname: string, ips: readonly string[], type: QueryType): ZoneAnswer {
    const answers: Answer[] = [];
    for (const ip of ips) {
      if (isIPv4(ip) && (type === 'A' || type === 'ANY'))
        answers.push({ name: qname, type: 'A', ttl: this.#ttl, class: 'IN', data: ip });
      else if (isIPv6(ip) && (type === 'AAAA' || type === 'ANY'))
        answers.push({ name: qname, type: 'AAAA', ttl: this.#ttl, class: 'IN', data: ip });
    }
    return answers.length === 0 ? this.#nodata() : this.#found(answers);
  }

  #lookupReverse(qname: string, name: string, type: QueryType): ZoneAnswer {
    const targets = this.#reverseNames().get(name);
    if (targets === undefined) return this.#nxdomain();
    if (type !== 'PTR' && type !== 'ANY') return this.#nodata();
    return this.#found(
      targets.map((t) => ({ name: qname, type: 'PTR', ttl: this.#ttl, class: 'IN', data: t })),
    );
  }

  /** Reverse name → the names that resolve to that address (services, then named endpoints). */
  #reverseNames(): Map<string, string[]> {
    if (this.#reverse !== undefined) return this.#reverse;
    const map = new Map<string, string[]>();
    const add = (ip: string, target: string): void => {
      const r = reverseName(ip);
      if (r === undefined) return;
      const list = map.get(r);
      if (list === undefined) map.set(r, [target]);
      else if (!list.includes(target)) list.push(target);
    };
    for (const svc of this.#services.values()) {
      const base = `${svc.metadata.name ?? ''}.${svc.metadata.namespace ?? ''}.svc.${this.#zone}`;
      if (svc.spec?.type === 'ExternalName') continue;
      if (svc.spec?.clusterIP === 'None') {
        for (const ep of this.#endpoints(svc)) add(ep.ip, `${this.#endpointLabel(ep)}.${base}`);
      } else for (const ip of this.#serviceIps(svc)) add(ip, base);
    }
    this.#reverse = map;
    return map;
  }

  #soa(): Answer {
    return {
      name: this.#zone,
      type: 'SOA',
      ttl: this.#ttl,
      class: 'IN',
      data: {
        mname: `ns.dns.${this.#zone}`,
        rname: `hostmaster.${this.#zone}`,
        serial: 1,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: this.#ttl,
      },
    };
  }

  #found(answers: Answer[], additionals: Answer[] = []): ZoneAnswer {
    return { rcode: 0, answers, additionals, authorities: [] };
  }

  #nodata(): ZoneAnswer {
    return { rcode: 0, answers: [], additionals: [], authorities: [this.#soa()] };
  }

  #nxdomain(): ZoneAnswer {
    return { rcode: 3, answers: [], additionals: [], authorities: [this.#soa()] };
  }
}
