/**
 * Service networking through stock clients: ClusterIPs from `--service-cluster-ip-range`
 * (IPAddress objects as kube v1.33 keeps them), NodePorts from `--service-node-port-range`,
 * requested values honoured or refused with kube's messages, releases on delete and type change,
 * the `kubernetes` ServiceCIDR and the `default/kubernetes` Service with its Endpoints and
 * EndpointSlice on the advertise address and secure port; dual-stack ranges.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, runKubectl, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let core: k8s.CoreV1Api;
let net: k8s.NetworkingV1Api;

beforeAll(async () => {
  server = await startTestServer({
    args: ['--service-cluster-ip-range=10.96.0.0/28', '--service-node-port-range=30000-30009'],
  });
  core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  net = server.kubeConfig.makeApiClient(k8s.NetworkingV1Api);
});
afterAll(async () => {
  await server.close();
});

function service(name: string, spec: k8s.V1ServiceSpec = {}): k8s.V1Service {
  return { metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } };
}

describe('the kubernetes Service', () => {
  it('default/kubernetes has the first IP, port 443 → the secure port, and endpoints', async () => {
    const port = Number(new URL(server.url).port);
    const svc = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    expect(svc.spec?.clusterIP).toBe('10.96.0.1');
    expect(svc.spec?.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }]);
    const ep = await core.readNamespacedEndpoints({ name: 'kubernetes', namespace: 'default' });
    expect(ep.subsets?.[0]?.addresses?.map((a) => a.ip)).toEqual(['127.0.0.1']);
    expect(ep.subsets?.[0]?.ports?.[0]?.port).toBe(port);
    const slices = server.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    const slice = await slices.readNamespacedEndpointSlice({ name: 'kubernetes', namespace: 'default' });
    expect(slice.endpoints.map((e) => e.addresses)).toEqual([['127.0.0.1']]);
    expect(slice.ports?.[0]?.port).toBe(port);
    const cidr = await net.readServiceCIDR({ name: 'kubernetes' });
    expect(cidr.spec?.cidrs).toEqual(['10.96.0.0/28']);
    const ip = await net.readIPAddress({ name: '10.96.0.1' });
    expect({ ...ip.spec?.parentRef }).toEqual({
      resource: 'services',
      namespace: 'default',
      name: 'kubernetes',
    });
    expect(ip.metadata?.labels?.['ipaddress.kubernetes.io/managed-by']).toBe('ipallocator.k8s.io');
  });

  it('kubectl lists servicecidrs and ipaddresses', async () => {
    const res = await runKubectl(
      '1.33',
      ['get', 'servicecidrs,ipaddresses', '-o', 'name'],
      server.kubeconfigPath,
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain('servicecidr.networking.k8s.io/kubernetes');
    expect(res.stdout).toContain('ipaddress.networking.k8s.io/10.96.0.1');
  });
});

describe('cluster IPs', () => {
  it('allocates in range, honours a requested IP and refuses a taken or out-of-range one', async () => {
    const a = await core.createNamespacedService({ namespace: 'default', body: service('ip-a') });
    const ipA = a.spec?.clusterIP ?? '';
    expect(ipA).toMatch(/^10\.96\.0\.([2-9]|1[0-4])$/);
    expect(a.spec?.clusterIPs).toEqual([ipA]);
    const owned = await net.readIPAddress({ name: ipA });
    expect(owned.spec?.parentRef?.name).toBe('ip-a');
    const wanted = ipA === '10.96.0.5' ? '10.96.0.6' : '10.96.0.5';
    const b = await core.createNamespacedService({
      namespace: 'default',
      body: service('ip-b', { clusterIP: wanted }),
    });
    expect(b.spec?.clusterIP).toBe(wanted);
    const taken = await clientFailure(
      core.createNamespacedService({ namespace: 'default', body: service('ip-c', { clusterIP: wanted }) }),
    );
    expect(taken.code).toBe(422);
    expect(taken.body['message']).toBe(
      `Service "ip-c" is invalid: spec.clusterIPs: Invalid value: []string{"${wanted}"}: failed to allocate IP ${wanted}: provided IP is already allocated`,
    );
    const outside = await clientFailure(
      core.createNamespacedService({
        namespace: 'default',
        body: service('ip-d', { clusterIP: '10.0.0.5' }),
      }),
    );
    expect(outside.code).toBe(422);
    expect(outside.body['message']).toBe(
      'Service "ip-d" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/28',
    );
    // Delete releases: the IP can be requested again.
    await core.deleteNamespacedService({ name: 'ip-b', namespace: 'default' });
    await expect(net.readIPAddress({ name: wanted })).rejects.toThrow();
    const again = await core.createNamespacedService({
      namespace: 'default',
      body: service('ip-e', { clusterIP: wanted }),
    });
    expect(again.spec?.clusterIP).toBe(wanted);
  });

  it('headless and ExternalName Services get no IP; a change to ExternalName releases it', async () => {
    const h = await core.createNamespacedService({
      namespace: 'default',
      body: service('headless', { clusterIP: 'None' }),
    });
    expect(h.spec?.clusterIPs).toEqual(['None']);
    const svc = await core.createNamespacedService({ namespace: 'default', body: service('to-ext') });
    const ip = svc.spec?.clusterIP ?? '';
    await core.replaceNamespacedService({
      name: 'to-ext',
      namespace: 'default',
      body: { ...svc, spec: { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 80 }] } },
    });
    await expect(net.readIPAddress({ name: ip })).rejects.toThrow();
  });
});

describe('type changes', () => {
  // What the e2e Services specs do: read the Service, change its type, update the whole object.
  const retype = async (name: string, change: (spec: k8s.V1ServiceSpec) => void): Promise<k8s.V1Service> => {
    const svc = await core.readNamespacedService({ name, namespace: 'default' });
    change(svc.spec!);
    return core.replaceNamespacedService({ name, namespace: 'default', body: svc });
  };

  it('a change to ExternalName wipes the allocated cluster IPs, families and policy, as kube does', async () => {
    const svc = await core.createNamespacedService({ namespace: 'default', body: service('ci-to-ext') });
    const ip = svc.spec?.clusterIP ?? '';
    const ext = await retype('ci-to-ext', (spec) => {
      spec.type = 'ExternalName';
      spec.externalName = 'example.com';
    });
    expect(ext.spec?.clusterIP).toBeUndefined();
    expect(ext.spec?.clusterIPs).toBeUndefined();
    expect(ext.spec?.ipFamilies).toBeUndefined();
    expect(ext.spec?.ipFamilyPolicy).toBeUndefined();
    await expect(net.readIPAddress({ name: ip })).rejects.toThrow();
    // And back: a new cluster IP.
    const back = await retype('ci-to-ext', (spec) => {
      spec.type = 'ClusterIP';
      delete spec.externalName;
    });
    expect(back.spec?.clusterIP).toMatch(/^10\.96\.0\.\d+$/);
    expect(back.spec?.ipFamilyPolicy).toBe('SingleStack');
  });

  it('a change from NodePort wipes the node ports and the external traffic policy', async () => {
    const np = await core.createNamespacedService({
      namespace: 'default',
      body: service('np-to-ci', { type: 'NodePort' }),
    });
    expect(np.spec?.externalTrafficPolicy).toBe('Cluster');
    const ci = await retype('np-to-ci', (spec) => {
      spec.type = 'ClusterIP';
    });
    expect(ci.spec?.ports?.[0]?.nodePort).toBeUndefined();
    expect(ci.spec?.externalTrafficPolicy).toBeUndefined();
    expect(ci.spec?.clusterIP).toBe(np.spec?.clusterIP);
    // A node port the user still names is not wiped: validation refuses it.
    await retype('np-to-ci', (spec) => {
      spec.type = 'NodePort';
    });
    const kept = await clientFailure(
      retype('np-to-ci', (spec) => {
        spec.type = 'ClusterIP';
        spec.ports![0]!.nodePort = (spec.ports![0]!.nodePort ?? 0) === 30009 ? 30008 : 30009;
      }),
    );
    expect(kept.code).toBe(422);
    const ext = await retype('np-to-ci', (spec) => {
      spec.type = 'ExternalName';
      spec.externalName = 'example.com';
    });
    expect(ext.spec?.ports?.[0]?.nodePort).toBeUndefined();
    expect(ext.spec?.clusterIPs).toBeUndefined();
  });
});

describe('node ports', () => {
  it('allocates NodePorts in range and refuses a taken or out-of-range one with kube messages', async () => {
    const np = await core.createNamespacedService({
      namespace: 'default',
      body: service('np-a', { type: 'NodePort' }),
    });
    const port = np.spec?.ports?.[0]?.nodePort ?? 0;
    expect(port).toBeGreaterThanOrEqual(30000);
    expect(port).toBeLessThanOrEqual(30009);
    const taken = await clientFailure(
      core.createNamespacedService({
        namespace: 'default',
        body: service('np-b', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
      }),
    );
    expect(taken.code).toBe(422);
    expect(taken.body['message']).toBe(
      `Service "np-b" is invalid: spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`,
    );
    const outside = await clientFailure(
      core.createNamespacedService({
        namespace: 'default',
        body: service('np-c', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }),
      }),
    );
    expect(outside.body['message']).toBe(
      'Service "np-c" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30009',
    );
    // A refused create leaves no IP behind: the IPs in use are exactly the Services'.
    const ips = await net.listIPAddress();
    const services = await core.listServiceForAllNamespaces();
    const held = services.items.flatMap((s) => (s.spec?.clusterIPs ?? []).filter((i) => i !== 'None'));
    expect(ips.items.map((i) => i.metadata?.name).sort()).toEqual([...held].sort());
  });
});

describe('dual-stack ranges', () => {
  it('PreferDualStack Services get one IP per family', async () => {
    const ds = await startTestServer({ args: ['--service-cluster-ip-range=10.97.0.0/24,fd00:10:97::/112'] });
    try {
      const api = ds.kubeConfig.makeApiClient(k8s.CoreV1Api);
      const svc = await api.createNamespacedService({
        namespace: 'default',
        body: service('dual', { ipFamilyPolicy: 'PreferDualStack' }),
      });
      expect(svc.spec?.ipFamilies).toEqual(['IPv4', 'IPv6']);
      expect(svc.spec?.clusterIPs?.[0]).toMatch(/^10\.97\.0\./);
      expect(svc.spec?.clusterIPs?.[1]).toMatch(/^fd00:10:97::/);
      const ipv6 = svc.spec?.clusterIPs?.[1] ?? '';
      const obj = await ds.kubeConfig.makeApiClient(k8s.NetworkingV1Api).readIPAddress({ name: ipv6 });
      expect(obj.metadata?.labels?.['ipaddress.kubernetes.io/ip-family']).toBe('IPv6');
    } finally {
      await ds.close();
    }
  });
});
