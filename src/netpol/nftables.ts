/**
 * NetworkPolicy as nftables rules in a table of its own (`ip capstan-netpol`) on the forward
 * hook. Pods on one bridge talk at layer 2: their frames reach the IP hooks (with conntrack)
 * through br_netfilter (`net.bridge.bridge-nf-call-iptables=1`, which kube requires of a node
 * too); traffic the node routes between pods (through a ClusterIP) passes the same hook.
 *
 * `check` accepts established and related traffic, then sends a packet from an egress-isolated
 * pod through its egress chain and a packet to an ingress-isolated pod through its ingress
 * chain. Each such chain returns on an allowed match and drops otherwise. Traffic from the
 * node's own addresses to its pods is always allowed (probes). The whole table is replaced in
 * one atomic transaction per sync.
 */
import { createHash } from 'node:crypto';
import type { AllowRule, PodPolicy } from './model.js';

/** The table's name unless configured. */
export const NETPOL_TABLE = 'capstan-netpol';

function hash(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 10);
}

function portMatches(rule: AllowRule): string[] {
  if (rule.ports === undefined) return [''];
  return rule.ports.map((p) => {
    if (p.port === undefined) return `meta l4proto ${p.protocol}`;
    const range = p.endPort !== undefined && p.endPort > p.port ? `${p.port}-${p.endPort}` : String(p.port);
    return `meta l4proto ${p.protocol} th dport ${range}`;
  });
}

function peerMatches(rule: AllowRule, field: 'saddr' | 'daddr'): string[] {
  const out: string[] = [];
  if (rule.ips === undefined && rule.blocks === undefined) return [''];
  if (rule.ips !== undefined && rule.ips.length > 0) out.push(`ip ${field} { ${rule.ips.join(', ')} }`);
  for (const b of rule.blocks ?? []) {
    out.push(
      `ip ${field} ${b.cidr}${b.except.length > 0 ? ` ip ${field} != { ${b.except.join(', ')} }` : ''}`,
    );
  }
  return out;
}

function chainRules(rules: readonly AllowRule[], field: 'saddr' | 'daddr'): string[] {
  const out: string[] = [];
  for (const r of rules) {
    for (const peer of peerMatches(r, field)) {
      for (const port of portMatches(r))
        out.push(`${[peer, port].filter((s) => s !== '').join(' ')} return`.trim());
    }
  }
  out.push('drop');
  return out;
}

/** The `nft -f` transaction that replaces the table with the rules of `pods`. */
export function netpolTransaction(
  pods: readonly PodPolicy[],
  nodeIps: readonly string[],
  table = NETPOL_TABLE,
): string {
  const t = `ip ${table}`;
  const lines = [
    `add table ${t}`,
    `delete table ${t}`,
    `add table ${t}`,
    `add map ${t} ingress-pods { type ipv4_addr : verdict ; }`,
    `add map ${t} egress-pods { type ipv4_addr : verdict ; }`,
    `add chain ${t} forward { type filter hook forward priority 0 ; policy accept ; }`,
    `add chain ${t} check`,
    `add rule ${t} forward jump check`,
    `add rule ${t} check ct state established,related accept`,
  ];
  if (nodeIps.length > 0) lines.push(`add rule ${t} check ip saddr { ${nodeIps.join(', ')} } accept`);
  lines.push(
    `add rule ${t} check ip saddr vmap @egress-pods`,
    `add rule ${t} check ip daddr vmap @ingress-pods`,
  );
  for (const pod of pods) {
    if (pod.egress !== undefined) {
      const chain = `eg-${hash(pod.ip)}`;
      lines.push(`add chain ${t} ${chain}`);
      for (const r of chainRules(pod.egress, 'daddr')) lines.push(`add rule ${t} ${chain} ${r}`);
      lines.push(`add element ${t} egress-pods { ${pod.ip} : jump ${chain} }`);
    }
    if (pod.ingress !== undefined) {
      const chain = `in-${hash(pod.ip)}`;
      lines.push(`add chain ${t} ${chain}`);
      for (const r of chainRules(pod.ingress, 'saddr')) lines.push(`add rule ${t} ${chain} ${r}`);
      lines.push(`add element ${t} ingress-pods { ${pod.ip} : jump ${chain} }`);
    }
  }
  return `${lines.join('\n')}\n`;
}
