/**
 * The proxy's nftables ruleset, in a table of its own (`ip capstan-proxy` by default, never
 * kube-proxy's `kube-proxy`), shaped as kube-proxy's nftables mode:
 *
 * - base chains on the nat hooks (prerouting and output at dstnat, postrouting at srcnat) and
 *   the filter hooks (output, forward) jump to `services`, `masquerading` and
 *   `service-endpoints-check`;
 * - `services` looks the destination up in the verdict maps `service-ips`
 *   (ClusterIP . protocol . port) and, for local addresses, `service-nodeports`;
 * - per service port a cluster chain (`svc-…`) picks an endpoint chain (`sep-…`) at random
 *   (`numgen`), after ClientIP affinity sets; an external chain (`ext-…`) for node ports
 *   masquerades (policy Cluster) or keeps the client's address and local endpoints (Local);
 * - endpoint chains DNAT, marking hairpin traffic (a pod reaching itself) for masquerade;
 * - ports without endpoints are rejected through `no-endpoint-services`.
 *
 * {@link renderRuleset} gives the desired state; {@link transaction} the `nft -f` commands that
 * move the table from one state to the next: only chains whose rules changed are flushed and
 * refilled, only changed map elements are rewritten, and a first sync (or a sync after a
 * failure) replaces the whole table in one atomic transaction, so a restart reconciles rather
 * than duplicates.
 */
import { createHash } from 'node:crypto';
import type { ProxiedPort } from './model.js';

/** The table's name unless configured. */
export const DEFAULT_TABLE = 'capstan-proxy';

const MASQ_MARK = '0x4000';

/** Options of {@link renderRuleset}. */
export interface RulesetOptions {
  readonly table?: string;
  /** Pod network: traffic to a ClusterIP from outside it is masqueraded (kube's `--cluster-cidr`). */
  readonly clusterCidr?: string;
  /** Masquerade all service traffic (`--masquerade-all`). */
  readonly masqueradeAll?: boolean;
}

/** The desired state of the table. */
export interface Ruleset {
  readonly table: string;
  /** Chain name → its rules (base chains are fixed and not listed here). */
  readonly chains: ReadonlyMap<string, readonly string[]>;
  /** Set name → its declaration (affinity sets). */
  readonly sets: ReadonlyMap<string, string>;
  /** Map name → element key → verdict. */
  readonly maps: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

const MAPS: readonly [string, string][] = [
  ['service-ips', 'ipv4_addr . inet_proto . inet_service : verdict'],
  ['service-nodeports', 'inet_proto . inet_service : verdict'],
  ['no-endpoint-services', 'ipv4_addr . inet_proto . inet_service : verdict'],
  ['no-endpoint-nodeports', 'inet_proto . inet_service : verdict'],
];

function hash(s: string): string {
  return createHash('sha256').update(s).digest('base64url').slice(0, 8).toUpperCase();
}

/** nft chain names allow these characters; anything else becomes `_`. */
function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_./-]/g, '_');
}

/** Renders the desired ruleset of these ports. */
export function renderRuleset(ports: readonly ProxiedPort[], opts: RulesetOptions = {}): Ruleset {
  const table = opts.table ?? DEFAULT_TABLE;
  const chains = new Map<string, string[]>();
  const sets = new Map<string, string>();
  const maps = new Map<string, Map<string, string>>(MAPS.map(([m]) => [m, new Map()]));
  const map = (name: string): Map<string, string> => maps.get(name) as Map<string, string>;

  chains.set('services', [
    'ip daddr . meta l4proto . th dport vmap @service-ips',
    'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports',
  ]);
  chains.set('mark-for-masquerade', [`meta mark set meta mark or ${MASQ_MARK}`]);
  chains.set('masquerading', [
    `meta mark & ${MASQ_MARK} == 0 return`,
    `meta mark set meta mark xor ${MASQ_MARK}`,
    'masquerade fully-random',
  ]);
  chains.set('service-endpoints-check', [
    'ip daddr . meta l4proto . th dport vmap @no-endpoint-services',
    'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports',
  ]);
  chains.set('reject-chain', ['reject']);

  for (const p of ports) {
    const id = `${p.id}`;
    const h = hash(id);
    const svcChain = safe(`svc-${h}-${id}`);
    const extChain = safe(`ext-${h}-${id}`);
    const clusterEps = p.internalLocal ? p.endpoints.filter((e) => e.local) : p.endpoints;
    const epChain = (e: { ip: string; port: number }): string =>
      safe(`sep-${hash(`${id}|${e.ip}:${e.port}`)}-${id}__${e.ip}/${e.port}`);
    const affinitySet = (e: { ip: string; port: number }): string =>
      `affinity-${hash(`${id}|${e.ip}:${e.port}`)}`;

    for (const e of p.endpoints) {
      const rules = [`ip saddr ${e.ip} jump mark-for-masquerade`];
      if (p.affinitySeconds !== undefined) {
        sets.set(
          affinitySet(e),
          `{ type ipv4_addr ; flags dynamic,timeout ; timeout ${p.affinitySeconds}s ; }`,
        );
        rules.push(`update @${affinitySet(e)} { ip saddr }`);
      }
      rules.push(`meta l4proto ${p.protocol} dnat to ${e.ip}:${e.port}`);
      chains.set(epChain(e), rules);
    }
    const pick = (eps: readonly { ip: string; port: number }[]): string[] => {
      const rules: string[] = [];
      if (p.affinitySeconds !== undefined) {
        for (const e of eps) rules.push(`ip saddr @${affinitySet(e)} goto ${epChain(e)}`);
      }
      if (eps.length > 0) {
        const arms = eps.map((e, i) => `${i} : goto ${epChain(e)}`).join(' , ');
        rules.push(`numgen random mod ${eps.length} vmap { ${arms} }`);
      }
      return rules;
    };

    for (const ip of p.clusterIPs) {
      const key = `${ip} . ${p.protocol} . ${p.port}`;
      if (clusterEps.length === 0) map('no-endpoint-services').set(key, 'goto reject-chain');
      else map('service-ips').set(key, `goto ${svcChain}`);
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
      if (!reachable) map('no-endpoint-nodeports').set(key, 'goto reject-chain');
      else {
        map('service-nodeports').set(key, `goto ${extChain}`);
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
  return { table, chains, sets, maps };
}

/** The fixed skeleton: the table, its maps and the base chains hooked into netfilter. */
function skeleton(t: string): string[] {
  const out = [`add table ip ${t}`];
  for (const [name, type] of MAPS) out.push(`add map ip ${t} ${name} { type ${type} ; }`);
  const base: [string, string, string][] = [
    ['nat-prerouting', 'nat hook prerouting priority dstnat', 'jump services'],
    ['nat-output', 'nat hook output priority -100', 'jump services'],
    ['nat-postrouting', 'nat hook postrouting priority srcnat', 'jump masquerading'],
    ['filter-output', 'filter hook output priority -110', 'ct state new jump service-endpoints-check'],
    ['filter-forward', 'filter hook forward priority -110', 'ct state new jump service-endpoints-check'],
  ];
  for (const [name, hook] of base) out.push(`add chain ip ${t} ${name} { type ${hook} ; policy accept ; }`);
  return out;
}

function baseRules(t: string): string[] {
  return [
    `add rule ip ${t} nat-prerouting jump services`,
    `add rule ip ${t} nat-output jump services`,
    `add rule ip ${t} nat-postrouting jump masquerading`,
    `add rule ip ${t} filter-output ct state new jump service-endpoints-check`,
    `add rule ip ${t} filter-forward ct state new jump service-endpoints-check`,
  ];
}

function sameRules(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((r, i) => r === b[i]);
}

/**
 * The `nft -f` commands from `prev` (what the table holds, or undefined: unknown) to `next`.
 * Empty when nothing changed.
 */
export function transaction(prev: Ruleset | undefined, next: Ruleset): string {
  const t = next.table;
  const lines: string[] = [];
  if (prev === undefined) {
    // Replace whatever a previous run left: create (so delete cannot fail), delete, build.
    lines.push(`add table ip ${t}`, `delete table ip ${t}`, ...skeleton(t));
    for (const [name, decl] of next.sets) lines.push(`add set ip ${t} ${name} ${decl}`);
    for (const name of next.chains.keys()) lines.push(`add chain ip ${t} ${name}`);
    lines.push(...baseRules(t));
    for (const [name, rules] of next.chains)
      for (const r of rules) lines.push(`add rule ip ${t} ${name} ${r}`);
    for (const [m, elements] of next.maps) {
      for (const [k, v] of elements) lines.push(`add element ip ${t} ${m} { ${k} : ${v} }`);
    }
    return `${lines.join('\n')}\n`;
  }
  // 1. new sets and chains exist before anything refers to them
  for (const [name, decl] of next.sets)
    if (!prev.sets.has(name)) lines.push(`add set ip ${t} ${name} ${decl}`);
  for (const name of next.chains.keys()) if (!prev.chains.has(name)) lines.push(`add chain ip ${t} ${name}`);
  // 2. chains whose rules changed are refilled
  for (const [name, rules] of next.chains) {
    const old = prev.chains.get(name);
    if (sameRules(old, rules)) continue;
    if (old !== undefined) lines.push(`flush chain ip ${t} ${name}`);
    for (const r of rules) lines.push(`add rule ip ${t} ${name} ${r}`);
  }
  // 3. map elements
  for (const [m, elements] of next.maps) {
    const old = prev.maps.get(m) ?? new Map<string, string>();
    for (const [k, v] of old) if (elements.get(k) !== v) lines.push(`delete element ip ${t} ${m} { ${k} }`);
    for (const [k, v] of elements)
      if (old.get(k) !== v) lines.push(`add element ip ${t} ${m} { ${k} : ${v} }`);
  }
  // 4. chains and sets no longer wanted: emptied first (they may refer to each other), then deleted
  const gone = [...prev.chains.keys()].filter((c) => !next.chains.has(c));
  for (const c of gone) lines.push(`flush chain ip ${t} ${c}`);
  for (const c of gone) lines.push(`delete chain ip ${t} ${c}`);
  for (const s of prev.sets.keys()) if (!next.sets.has(s)) lines.push(`delete set ip ${t} ${s}`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
