/**
 * The pod's /etc/hosts (src/agent/runtime/hosts.ts) against kubelet v1.33's
 * (managedHostsFileContent, nodeHostsFileContent, GeneratePodHostNameAndDomain): the managed file
 * byte for byte, the subdomain's fully qualified name, hostAliases, the host network's file, the
 * hostname cut to 63, and the sandbox's hostname (none on the host network; setHostnameAsFQDN).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import {
  hostNetworkHosts,
  managedHosts,
  podHostnameAndDomain,
  sandboxHostname,
} from '../../src/agent/runtime/hosts.js';

const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, name = 'web-0'): Pod => ({
  metadata: { name, namespace: 'shop', uid: 'u' },
  spec: { containers: [{ name: 'c' }], ...spec },
});

const BASE =
  '# Kubernetes-managed hosts file.\n' +
  '127.0.0.1\tlocalhost\n' +
  '::1\tlocalhost ip6-localhost ip6-loopback\n' +
  'fe00::0\tip6-localnet\n' +
  'fe00::0\tip6-mcastprefix\n' +
  'fe00::1\tip6-allnodes\n' +
  'fe00::2\tip6-allrouters\n';

describe('pod /etc/hosts', () => {
  it('lists the pod’s IPs under its hostname, as kubelet writes the file', () => {
    expect(managedHosts(pod(), ['10.244.0.7'], 'cluster.local')).toBe(`${BASE}10.244.0.7\tweb-0\n`);
  });

  it('names the pod fully with its subdomain, and appends hostAliases one line per IP', () => {
    const p = pod({
      hostname: 'db',
      subdomain: 'backend',
      hostAliases: [
        { ip: '123.45.67.89', hostnames: ['foo.local', 'bar.local'] },
        { ip: '10.1.2.3', hostnames: ['baz'] },
      ],
    });
    expect(managedHosts(p, ['10.244.0.7'], 'cluster.local')).toBe(
      `${BASE}10.244.0.7\tdb.backend.shop.svc.cluster.local\tdb\n` +
        '\n# Entries added by HostAliases.\n123.45.67.89\tfoo.local\tbar.local\n10.1.2.3\tbaz\n',
    );
  });

  it('gives a pod on the host network the node’s file, then the aliases', () => {
    const p = pod({ hostNetwork: true, hostAliases: [{ ip: '1.2.3.4', hostnames: ['x'] }] });
    expect(hostNetworkHosts(p, '127.0.0.1 localhost\n')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.2.3.4\tx\n',
    );
  });

  it('cuts a long pod name to 63 characters without a trailing dash', () => {
    const name = `${'a'.repeat(62)}-bcd`;
    expect(podHostnameAndDomain(pod({}, name), 'cluster.local')).toEqual({
      hostname: 'a'.repeat(62),
      domain: '',
    });
  });

  it('gives the sandbox no hostname on the host network, the FQDN with setHostnameAsFQDN', () => {
    expect(sandboxHostname(pod({ hostNetwork: true }), 'cluster.local')).toBeUndefined();
    expect(sandboxHostname(pod({ hostname: 'db', subdomain: 'backend' }), 'cluster.local')).toBe('db');
    expect(
      sandboxHostname(
        pod({ hostname: 'db', subdomain: 'backend', setHostnameAsFQDN: true }),
        'cluster.local',
      ),
    ).toBe('db.backend.shop.svc.cluster.local');
    // No subdomain: nothing to qualify it with.
    expect(sandboxHostname(pod({ setHostnameAsFQDN: true }), 'cluster.local')).toBe('web-0');
    expect(() =>
      sandboxHostname(
        pod({ hostname: 'h'.repeat(40), subdomain: 'backend', setHostnameAsFQDN: true }),
        'cluster.local',
      ),
    ).toThrow(
      /FQDN h+\.backend\.shop\.svc\.cluster\.local is too long \(64 characters is the max, 71 characters requested/,
    );
  });
});
