/**
 * A pod's resolver configuration (its `/etc/resolv.conf`, handed to the runtime as the sandbox's
 * DNS config), by `dnsPolicy` and `dnsConfig` as kubelet v1.33 forms it:
 *
 * - `ClusterFirst` (the default): the cluster DNS servers, the search path
 *   `<ns>.svc.<domain> svc.<domain> <domain>` followed by the host's search domains, and
 *   `ndots:5`; a host-network pod, or a node without `clusterDNS`, gets `Default` instead;
 * - `ClusterFirstWithHostNet`: as `ClusterFirst`, for host-network pods too;
 * - `Default`: the servers, search domains and options of the node's `--resolv-conf`;
 * - `None`: nothing but the pod's `dnsConfig`.
 *
 * A pod's `dnsConfig` is then appended: its nameservers and searches after the policy's (without
 * duplicates), its options overriding those of the same name. Nameservers are cut to 3 and
 * search domains to 32, kube's limits.
 */
import { readFileSync } from 'node:fs';
import type { Pod } from '../../api/types/core-v1.js';
import type * as CRI from '../cri/types.js';

/** kube's limits on a pod's resolver configuration. */
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;

/** What the node knows of DNS. */
export interface NodeDnsSettings {
  /** kubelet's `clusterDNS`: the cluster DNS server addresses. */
  readonly clusterDNS: readonly string[];
  /** kubelet's `clusterDomain`. */
  readonly clusterDomain: string;
  /** kubelet's `--resolv-conf`: the host resolver file; empty: none. */
  readonly resolvConf: string;
}

/** The servers, search domains and options of a resolv.conf text (later `search` lines win). */
export function parseResolvConfText(text: string): Required<CRI.DNSConfig> {
  const servers: string[] = [];
  let searches: string[] = [];
  const options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0] !== undefined) servers.push(rest[0]);
    else if (key === 'search' || key === 'domain') searches = rest.filter((s) => s !== '' && s !== '.');
    else if (key === 'options') options.push(...rest.filter((s) => s !== ''));
  }
  return { servers, searches, options };
}

function hostDns(path: string): Required<CRI.DNSConfig> {
  if (path === '') return { servers: [], searches: [], options: [] };
  try {
    return parseResolvConfText(readFileSync(path, 'utf8'));
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

/** `opts` then `extra`, an option of `extra` replacing one of the same name (`ndots:2` → `ndots:5`). */
function mergeOptions(opts: readonly string[], extra: readonly string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...opts, ...extra]) byName.set(o.split(':')[0] ?? o, o);
  return [...byName.values()];
}

/** Which of kube's configurations a pod gets: `cluster`, `host` or `none`. */
export function effectiveDnsPolicy(pod: Pod, clusterDNS: readonly string[]): 'cluster' | 'host' | 'none' {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'None') return 'none';
  if (policy === 'Default') return 'host';
  if (policy === 'ClusterFirst' && pod.spec?.hostNetwork === true) return 'host';
  return clusterDNS.length === 0 ? 'host' : 'cluster';
}

/** The pod's sandbox DNS config (see the module comment). */
export function podDnsConfig(pod: Pod, node: NodeDnsSettings): CRI.DNSConfig {
  const host = hostDns(node.resolvConf);
  const ns = pod.metadata.namespace ?? 'default';
  const domain = node.clusterDomain;
  let base: Required<CRI.DNSConfig>;
  switch (effectiveDnsPolicy(pod, node.clusterDNS)) {
    case 'none':
      base = { servers: [], searches: [], options: [] };
      break;
    case 'host':
      base = host;
      break;
    case 'cluster':
      base = {
        servers: [...node.clusterDNS],
        searches: unique([`${ns}.svc.${domain}`, `svc.${domain}`, domain, ...host.searches]),
        options: ['ndots:5'],
      };
      break;
  }
  const extra = pod.spec?.dnsConfig;
  const servers = unique([...base.servers, ...(extra?.nameservers ?? [])]).slice(0, MAX_NAMESERVERS);
  const searches = unique([...base.searches, ...(extra?.searches ?? [])]).slice(0, MAX_SEARCHES);
  const options = mergeOptions(
    base.options,
    (extra?.options ?? []).map((o) =>
      o.value === undefined ? (o.name ?? '') : `${o.name ?? ''}:${o.value}`,
    ),
  ).filter((o) => o !== '');
  return { servers, searches, options };
}
