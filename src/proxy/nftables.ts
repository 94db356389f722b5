/**
 * The proxy's nftables ruleset, in a table of its own (`ip capstan-proxy` by default, never
 * kube-proxy's `kube-proxy`), shaped as kube-proxy's nftables mode:
 *
 * - base chains on the nat hooks (prerouting and output at dstnat, postrouting at srcnat) and
 *   the filter hooks (output, forward) jump to `services`, `masquerading` and
 *   `service-endpoints-check`;
 * - `services` looks the destination up in the verdict maps `service-ips`
 *   (ClusterIP . protocol . port) and, for local addresses, `service-nodeports`;
 * - per service port a cluster chain (`svc-…`) picks an endpoint at random (`numgen`) and
 *   DNATs to it; an external chain (`ext-…`) for node ports masquerades (policy Cluster) or
 *   keeps the client's address and local endpoints (Local);
 * - ports without endpoints are rejected through `no-endpoint-services`.
 *
 * One difference from kube-proxy, for speed: without ClientIP affinity a service chain DNATs
 * through one `numgen` map of addresses instead of a chain per endpoint, so 1,000 Services with
 * 10 endpoints each need 1,000 chains rather than 11,000 (a third of the kernel's work on a
 * full sync). Hairpin traffic (a pod reaching itself through its Service) is found in
 * `masquerading` by the set `hairpin` of `endpoint . endpoint` pairs. Services with affinity
 * keep kube-proxy's per-endpoint chains (`sep-…`), which record clients in `affinity-…` sets.
 *
 * {@link renderService} gives one Service's part of the table; {@link ProxyTable} keeps what
 * the kernel holds per Service and writes the `nft -f` transactions: a partial one that
 * touches only the chains and elements of the Services that changed, and a full one that
 * converges the whole table (refilling every chain and map and deleting chains and sets no
 * longer wanted) without losing the affinity sets' entries, or rebuilds the table from
 * nothing when its state is unknown.
 */
import { createHash } from 'node:crypto';
import type { ProxiedPort } from './model.js';

/** The table's name unless configured. */
export const DEFAULT_TABLE = 'capstan-proxy';

const MASQ_MARK = '0x4000';

/** Options of {@link renderService}. */
export interface RulesetOptions {
  readonly table?: string;
  /** Pod network: traffic to a ClusterIP from outside it is masqueraded (kube's `--cluster-cidr`). */
  readonly clusterCidr?: string;
  /** Masquerade all service traffic (`--masquerade-all`). */
  readonly masqueradeAll?: boolean;
}

/** One Service's part of the table (all its ports). */
export interface ServiceRules {
  /** Chain name → its rules. */
  readonly chains: ReadonlyMap<string, readonly string[]>;
  /** Affinity set name → its declaration. */
  readonly sets: ReadonlyMap<string, string>;
  /** Map or set name → element key → verdict (`''` for a set's element). */
  readonly elements: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

/** The named maps and sets every table has, with their types. */
const MAPS: readonly [kind: 'map' | 'set', name: string, type: string][] = [
  ['map', 'service-ips', 'ipv4_addr . inet_proto . inet_service : verdict'],
  ['map', 'service-nodeports', 'inet_proto . inet_service : verdict'],
  ['map', 'no-endpoint-services', 'ipv4_addr . inet_proto . inet_service : verdict'],
  ['map', 'no-endpoint-nodeports', 'inet_proto . inet_service : verdict'],
  ['set', 'hairpin', 'ipv4_addr . ipv4_addr'],
];

/** The fixed chains (not hooked; the base chains jump to them) and their rules. */
const FIXED_CHAINS: ReadonlyMap<string, readonly string[]> = new Map([
  [
    'services',
    [
      'ip daddr . meta l4proto . th dport vmap @service-ips',
      'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports',
    ],
  ],
  ['mark-for-masquerade', [`meta mark set meta mark or ${MASQ_MARK}`]],
  [
    'masquerading',
    [
      'ct status dnat ip saddr . ip daddr @hairpin jump mark-for-masquerade',
      `meta mark & ${MASQ_MARK} == 0 return`,
      `meta mark set meta mark xor ${MASQ_MARK}`,
      'masquerade fully-random',
    ],
  ],
  [
    'service-endpoints-check',
    [
      'ip daddr . meta l4proto . th dport vmap @no-endpoint-services',
      'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports',
    ],
  ],
  ['reject-chain', ['reject']],
]);

/** The base chains: name, hook declaration, their one rule. */
const BASE_CHAINS: readonly [string, string, string][] = [
  ['nat-prerouting', 'nat hook prerouting priority dstnat', 'jump services'],
  ['nat-output', 'nat hook output priority -100', 'jump services'],
  ['nat-postrouting', 'nat hook postrouting priority srcnat', 'jump masquerading'],
  ['filter-output', 'filter hook output priority -110', 'ct state new jump service-endpoints-check'],
  ['filter-forward', 'filter hook forward priority -110', 'ct state new jump service-endpoints-check'],
];

function hash(s: string): string {
  return createHash('sha256').update(s).digest('base64url').slice(0, 8).toUpperCase();
}

/** nft chain names allow these characters; anything else becomes `_`. */
function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_./-]/g, '_');
}

/** Renders the part of the table for one Service's ports. */
export function renderService(ports: readonly ProxiedPort[], opts: RulesetOptions = {}): ServiceRules {
  const chains = new Map<string, string[]>();
  const sets = new Map<string, string>();
  const elements = new Map<string, Map<string, string>>();
  const element = (m: string, key: string, value: string): void => {
    let e = elements.get(m);
    if (e === undefined) elements.set(m, (e = new Map<string, string>()));
    e.set(key, value);
  };

  for (const p of ports) {
    const id = p.id;
    const h = hash(id);
    const svcChain = safe(`svc-${h}-${id}`);
    const extChain = safe(`ext-${h}-${id}`);
    const clusterEps = p.internalLocal ? p.endpoints.filter((e) => e.local) : p.endpoints;
    for (const e of p.endpoints) element('hairpin', `${e.ip} . ${e.ip}`, '');

    /** Rules that DNAT to one of `eps` (with affinity: through per-endpoint chains). */
    const pick = (eps: readonly { ip: string; port: number }[]): string[] => {
      if (eps.length === 0) return [];
      if (p.affinitySeconds === undefined) {
        if (eps.length === 1) return [`meta l4proto ${p.protocol} dnat to ${eps[0]?.ip}:${eps[0]?.port}`];
        const arms = eps.map((e, i) => `${i} : ${e.ip} . ${e.port}`).join(' , ');
        return [`meta l4proto ${p.protocol} dnat ip to numgen random mod ${eps.length} map { ${arms} }`];
      }
      const rules: string[] = [];
      const seps = eps.map((e) => {
        const eh = hash(`${id}|${e.ip}:${e.port}|${p.affinitySeconds}`);
        const sep = safe(`sep-${eh}-${id}__${e.ip}/${e.port}`);
        const set = `affinity-${eh}`;
        sets.set(set, `{ type ipv4_addr ; flags dynamic,timeout ; timeout ${p.affinitySeconds}s ; }`);
        chains.set(sep, [
          `update @${set} { ip saddr }`,
          `meta l4proto ${p.protocol} dnat to ${e.ip}:${e.port}`,
        ]);
        rules.push(`ip saddr @${set} goto ${sep}`);
        return sep;
      });
      rules.push(
        `numgen random mod ${seps.length} vmap { ${seps.map((s, i) => `${i} : goto ${s}`).join(' , ')} }`,
      );
      return rules;
    };

    for (const ip of p.clusterIPs) {
      const key = `${ip} . ${p.protocol} . ${p.port}`;
      if (clusterEps.length === 0) element('no-endpoint-services', key, 'goto reject-chain');
      else element('service-ips', key, `goto ${svcChain}`);
    }
    if (clusterEps.length > 0) {
      const masq: string[] = [];
      if (opts.masqueradeAll === true) masq.push('jump mark-for-masquerade');
      else if (opts.clusterCidr !== undefined)
        masq.push(`ip saddr != ${opts.clusterCidr} jump mark-for-masquerade`);
      chains.set(svcChain, [...masq, ...pick(clusterEps)]);
    }

    if (p.nodePort !== undefined) {
      const key = `${p.protocol} . ${p.nodePort}`;
      const localEps = p.endpoints.filter((e) => e.local);
      const reachable = p.externalLocal
        ? localEps.length > 0 || clusterEps.length > 0
        : clusterEps.length > 0;
      if (!reachable) element('no-endpoint-nodeports', key, 'goto reject-chain');
      else {
        element('service-nodeports', key, `goto ${extChain}`);
        if (!p.externalLocal) chains.set(extChain, ['jump mark-for-masquerade', `goto ${svcChain}`]);
        else {
          // The node itself may use any endpoint (masqueraded); outside clients only local ones, unmasqueraded.
          const rules =
            clusterEps.length > 0
              ? ['fib saddr type local jump mark-for-masquerade', `fib saddr type local goto ${svcChain}`]
              : [];
          rules.push(...(localEps.length > 0 ? pick(localEps) : ['drop']));
          chains.set(extChain, rules);
        }
      }
    }
  }
  return { chains, sets, elements };
}

/** The chains and sets (not maps) the kernel's table holds (from {@link parseListing}). */
export interface TableListing {
  readonly chains: ReadonlySet<string>;
  readonly sets: ReadonlySet<string>;
}

/**
 * The chains and sets of `table` in the JSON of `nft -j list chains ip` and `nft -j list sets
 * ip` (other tables' objects are ignored); undefined when the table has none (it is absent).
 */
export function parseListing(table: string, chainsJson: string, setsJson: string): TableListing | undefined {
  const names = (json: string, kind: string): string[] => {
    const items = (JSON.parse(json) as { nftables?: Record<string, { table?: string; name?: string }>[] })
      .nftables;
    return (items ?? []).flatMap((o) => {
      const x = o[kind];
      return x?.table === table && x.name !== undefined ? [x.name] : [];
    });
  };
  const chains = new Set(names(chainsJson, 'chain'));
  const sets = new Set(names(setsJson, 'set'));
  return chains.size === 0 && sets.size === 0 ? undefined : { chains, sets };
}

/** A transaction and what to record once the kernel took it. */
export interface Plan {
  /** The `nft -f` input; empty when nothing changes. */
  readonly script: string;
  /** Records the transaction as applied (call only after it succeeded). */
  commit(): void;
}

/** An element's identity across Services: map name and key. */
const elementId = (m: string, key: string): string => `${m}\u0000${key}`;

/**
 * The proxy's table as the kernel holds it, Service by Service. Two Services may claim the same
 * map key (a stale ClusterIP, a shared endpoint in `hairpin`): the element then carries the
 * first claim still standing, and goes only when no Service claims it.
 */
export class ProxyTable {
  readonly name: string;
  #applied = new Map<string, ServiceRules>();
  /** Element id → Service key → value, in claim order. */
  #claims = new Map<string, Map<string, string>>();

  constructor(table = DEFAULT_TABLE) {
    this.name = table;
  }

  /** The Service keys whose rules the table holds. */
  get services(): ReadonlySet<string> {
    return new Set(this.#applied.keys());
  }

  /**
   * A partial transaction: the changed Services' new rules (undefined: the Service is gone).
   * Chains whose rules are unchanged, and every other Service's chains, are not touched.
   */
  partial(changes: ReadonlyMap<string, ServiceRules | undefined>): Plan {
    const t = this.name;
    const claims = new Map([...this.#claims].map(([id, c]) => [id, new Map(c)]));
    const addObjects: string[] = [];
    const refill: string[] = [];
    const goneChains: string[] = [];
    const goneSets: string[] = [];
    const touched = new Set<string>();
    for (const [key, next] of changes) {
      const prev = this.#applied.get(key);
      const nextChains = next?.chains ?? new Map<string, readonly string[]>();
      const nextSets = next?.sets ?? new Map<string, string>();
      for (const [name, decl] of nextSets)
        if (prev?.sets.has(name) !== true) addObjects.push(`add set ip ${t} ${name} ${decl}`);
      for (const [name, rules] of nextChains) {
        const old = prev?.chains.get(name);
        if (old === undefined) addObjects.push(`add chain ip ${t} ${name}`);
        else if (sameRules(old, rules)) continue;
        else refill.push(`flush chain ip ${t} ${name}`);
        for (const r of rules) refill.push(`add rule ip ${t} ${name} ${r}`);
      }
      for (const name of prev?.chains.keys() ?? []) if (!nextChains.has(name)) goneChains.push(name);
      for (const name of prev?.sets.keys() ?? []) if (!nextSets.has(name)) goneSets.push(name);
      // claims: drop the old ones, then add the new
      for (const [m, els] of prev?.elements ?? []) {
        for (const k of els.keys()) {
          const id = elementId(m, k);
          claims.get(id)?.delete(key);
          touched.add(id);
        }
      }
      for (const [m, els] of next?.elements ?? []) {
        for (const [k, v] of els) {
          const id = elementId(m, k);
          let c = claims.get(id);
          if (c === undefined) claims.set(id, (c = new Map<string, string>()));
          c.set(key, v);
          touched.add(id);
        }
      }
    }
    const deletes: string[] = [];
    const adds: string[] = [];
    for (const id of touched) {
      const before = winner(this.#claims.get(id));
      const after = winner(claims.get(id));
      if (claims.get(id)?.size === 0) claims.delete(id);
      if (before === after) continue;
      const [m = '', k = ''] = id.split('\u0000');
      if (before !== undefined) deletes.push(`delete element ip ${t} ${m} { ${k} }`);
      if (after !== undefined) adds.push(`add element ip ${t} ${m} { ${element(k, after)} }`);
    }
    const lines = [
      ...addObjects,
      ...refill,
      ...deletes,
      ...adds,
      // no longer wanted: emptied first (they may refer to each other), then deleted
      ...goneChains.map((c) => `flush chain ip ${t} ${c}`),
      ...goneChains.map((c) => `delete chain ip ${t} ${c}`),
      ...goneSets.map((s) => `delete set ip ${t} ${s}`),
    ];
    return {
      script: lines.length === 0 ? '' : `${lines.join('\n')}\n`,
      commit: () => {
        for (const [key, next] of changes) {
          if (next === undefined) this.#applied.delete(key);
          else this.#applied.set(key, next);
        }
        this.#claims = claims;
      },
    };
  }

  /**
   * A full transaction to `all` (every Service's rules). With the kernel's `existing` listing it
   * converges the table in place: every chain and map is refilled, chains and sets no longer
   * wanted are deleted, affinity sets keep their entries. Without it (the table's state is
   * unknown) the table is deleted and built again, in the same atomic transaction.
   */
  full(all: ReadonlyMap<string, ServiceRules>, existing: TableListing | undefined): Plan {
    const t = this.name;
    const lines: string[] = [];
    if (existing === undefined) lines.push(`add table ip ${t}`, `delete table ip ${t}`);
    const had = (chain: string): boolean => existing?.chains.has(chain) === true;
    lines.push(`add table ip ${t}`);
    for (const [kind, name, type] of MAPS) {
      lines.push(`add ${kind} ip ${t} ${name} { type ${type} ; }`);
      if (existing !== undefined) lines.push(`flush ${kind} ip ${t} ${name}`);
    }
    const chains = new Map<string, readonly string[]>(FIXED_CHAINS);
    const sets = new Map<string, string>();
    const claims = new Map<string, Map<string, string>>();
    for (const [key, r] of all) {
      for (const [name, rules] of r.chains) chains.set(name, rules);
      for (const [name, decl] of r.sets) sets.set(name, decl);
      for (const [m, els] of r.elements) {
        for (const [k, v] of els) {
          const id = elementId(m, k);
          let c = claims.get(id);
          if (c === undefined) claims.set(id, (c = new Map<string, string>()));
          c.set(key, v);
        }
      }
    }
    for (const [name, decl] of sets) lines.push(`add set ip ${t} ${name} ${decl}`);
    for (const [name, hook] of BASE_CHAINS) {
      lines.push(`add chain ip ${t} ${name} { type ${hook} ; policy accept ; }`);
      if (had(name)) lines.push(`flush chain ip ${t} ${name}`);
    }
    for (const name of chains.keys()) {
      lines.push(`add chain ip ${t} ${name}`);
      if (had(name)) lines.push(`flush chain ip ${t} ${name}`);
    }
    const stale = [...(existing?.chains ?? [])].filter(
      (c) => !chains.has(c) && !BASE_CHAINS.some(([b]) => b === c),
    );
    for (const c of stale) lines.push(`flush chain ip ${t} ${c}`);
    for (const [name, , rule] of BASE_CHAINS) lines.push(`add rule ip ${t} ${name} ${rule}`);
    for (const [name, rules] of chains) for (const r of rules) lines.push(`add rule ip ${t} ${name} ${r}`);
    for (const [id, c] of claims) {
      const [m = '', k = ''] = id.split('\u0000');
      lines.push(`add element ip ${t} ${m} { ${element(k, winner(c) ?? '')} }`);
    }
    for (const c of stale) lines.push(`delete chain ip ${t} ${c}`);
    const fixedSets = new Set(MAPS.map(([, n]) => n));
    for (const s of existing?.sets ?? [])
      if (!sets.has(s) && !fixedSets.has(s)) lines.push(`delete set ip ${t} ${s}`);
    return {
      script: `${lines.join('\n')}\n`,
      commit: () => {
        this.#applied = new Map(all);
        this.#claims = claims;
      },
    };
  }
}

function winner(claims: ReadonlyMap<string, string> | undefined): string | undefined {
  for (const v of claims?.values() ?? []) return v;
  return undefined;
}

/** An element as nft writes it: `key : verdict` in a map, `key` in a set. */
function element(key: string, value: string): string {
  return value === '' ? key : `${key} : ${value}`;
}

function sameRules(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}
