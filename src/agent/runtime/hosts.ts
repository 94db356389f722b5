/**
 * The `/etc/hosts` kubelet gives a pod's containers (its `etc-hosts` file, bind-mounted unless a
 * container mounts something there itself): on the pod network, localhost, the IPv6 names, and the
 * pod's own IPs under its hostname (fully qualified first when it has a subdomain); on the host
 * network, the node's own file. Either way `hostAliases` follow, one line per IP.
 */
import type { HostAlias, Pod } from '../../api/types/core-v1.js';

const HEADER = '# Kubernetes-managed hosts file.\n';
const HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

/** The pod's hostname and domain, as kubelet's GeneratePodHostNameAndDomain makes them. */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  let hostname = pod.metadata.name ?? '';
  // A name longer than a hostname may be is cut to 63, without a trailing '-' or '.'.
  if (hostname.length > 63) hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
  if (pod.spec?.hostname) hostname = pod.spec.hostname;
  const sub = pod.spec?.subdomain;
  const domain = sub ? `${sub}.${pod.metadata.namespace ?? ''}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** The longest hostname the kernel takes. */
const MAX_KERNEL_HOSTNAME = 64;

/**
 * The hostname of a pod's sandbox (kubelet's GetNodenameForKernel): none on the host network
 * (the pod shares the node's UTS namespace, where the runtime cannot set one); else the pod's
 * hostname, fully qualified with `setHostnameAsFQDN` and a subdomain.
 * @throws Error with kubelet's message when that name is longer than the kernel takes
 */
export function sandboxHostname(pod: Pod, clusterDomain: string): string | undefined {
  if (pod.spec?.hostNetwork) return undefined;
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  if (!pod.spec?.setHostnameAsFQDN || domain === '') return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > MAX_KERNEL_HOSTNAME) {
    throw new Error(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long ` +
        `(${MAX_KERNEL_HOSTNAME} characters is the max, ${fqdn.length} characters requested)`,
    );
  }
  return fqdn;
}

function aliasLines(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases || aliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

/** The hosts file of a pod on the pod network. */
export function managedHosts(pod: Pod, podIPs: readonly string[], clusterDomain: string): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  let out =
    HEADER +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs)
    out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + aliasLines(pod.spec?.hostAliases);
}

/** The hosts file of a pod on the host network: the node's, then the aliases. */
export function hostNetworkHosts(pod: Pod, nodeHosts: string): string {
  return HEADER_HOST_NETWORK + nodeHosts + aliasLines(pod.spec?.hostAliases);
}
