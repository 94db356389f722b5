/**
 * The endpoints and EndpointSlice controllers against a real server: pods created and made
 * ready through the API (this test plays the kubelet), Services with and without selectors,
 * named target ports resolved per pod, readiness and termination, publishNotReadyAddresses,
 * hostname/subdomain, zones, the per-slice limit, the labels and annotations kube sets, and
 * the API server's own `default/kubernetes` left alone. Read back with the client and kubectl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoints, Node, Pod, Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import {
  ENDPOINTS,
  ENDPOINT_SLICES,
  NAMESPACES,
  NODES,
  PODS,
  SERVICES,
  type ResourceClient,
} from '../../src/client/index.js';
import { endpointsController } from '../../src/controllers/endpoints/index.js';
import { endpointSliceController } from '../../src/controllers/endpointslice/index.js';
import { rfc3339, startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'ep';
let env: InfraEnv;
let pods: ResourceClient<Pod>;
let services: ResourceClient<Service>;
let slices: ResourceClient<EndpointSlice>;
let endpoints: ResourceClient<Endpoints>;
let kubernetesEndpointsRv: string | undefined;

/** Creates a pod bound to `node` and reports it as a kubelet would. */
async function runPod(
  name: string,
  opts: {
    ip: string;
    ready: boolean;
    labels?: Record<string, string>;
    portName?: string;
    node?: string;
    hostname?: string;
    subdomain?: string;
  },
): Promise<Pod> {
  const created = await pods.create({
    metadata: { name, namespace: NS, labels: opts.labels ?? { app: 'web' } },
    spec: {
      nodeName: opts.node ?? 'n1',
      ...(opts.hostname === undefined ? {} : { hostname: opts.hostname }),
      ...(opts.subdomain === undefined ? {} : { subdomain: opts.subdomain }),
      containers: [
        { name: 'c', image: 'nginx', ports: [{ name: opts.portName ?? 'http', containerPort: 8080 }] },
      ],
    },
  });
  return setReady(created, opts.ip, opts.ready);
}

async function setReady(pod: Pod, ip: string, ready: boolean): Promise<Pod> {
  return pods.updateStatus({
    ...pod,
    status: {
      phase: 'Running',
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339() }],
    },
  });
}

async function slicesOf(service: string): Promise<EndpointSlice[]> {
  const list = await slices.list({ namespace: NS, labelSelector: `kubernetes.io/service-name=${service}` });
  return list.items;
}

beforeAll(async () => {
  env = await startInfraEnv([endpointsController, endpointSliceController], ['--max-endpoints-per-slice=2']);
  pods = env.client.resource<Pod>(PODS);
  services = env.client.resource<Service>(SERVICES);
  slices = env.client.resource<EndpointSlice>(ENDPOINT_SLICES);
  endpoints = env.client.resource<Endpoints>(ENDPOINTS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
  const nodes = env.client.resource<Node>(NODES);
  await nodes.create({ metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } });
  await nodes.create({ metadata: { name: 'n2' } });
  const kep = await until('default/kubernetes Endpoints', () =>
    endpoints.get('kubernetes', { namespace: 'default' }),
  );
  kubernetesEndpointsRv = kep.metadata.resourceVersion;
}, 60_000);
afterAll(async () => env?.close());

describe('a Service with a selector', () => {
  it('gets Endpoints and an EndpointSlice of its ready and not-ready pods', async () => {
    await runPod('web-1', { ip: '10.1.0.1', ready: true });
    await runPod('web-2', { ip: '10.1.0.2', ready: false, node: 'n2' });
    await services.create({
      metadata: { name: 'web', namespace: NS, labels: { tier: 'front' } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const ep = await until('Endpoints web with both pods', async () => {
      const e = await endpoints.get('web', { namespace: NS });
      const s = e.subsets?.[0];
      return s?.addresses?.length === 1 && s.notReadyAddresses?.length === 1 ? e : undefined;
    });
    expect(ep.metadata.labels).toEqual({ tier: 'front', 'endpointslice.kubernetes.io/skip-mirror': 'true' });
    expect(ep.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toMatch(
      /^\d{4}-\d\d-\d\dT/,
    );
    const subset = ep.subsets?.[0];
    expect(subset?.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(subset?.addresses?.[0]).toMatchObject({
      ip: '10.1.0.1',
      nodeName: 'n1',
      targetRef: { kind: 'Pod', name: 'web-1', namespace: NS },
    });
    expect(subset?.notReadyAddresses?.[0]).toMatchObject({ ip: '10.1.0.2', nodeName: 'n2' });

    const [slice, ...more] = await until('one slice with both pods', async () => {
      const s = await slicesOf('web');
      return s.length === 1 && s[0]?.endpoints?.length === 2 ? s : undefined;
    });
    expect(more).toEqual([]);
    expect(slice?.metadata.name).toMatch(/^web-/);
    expect(slice?.metadata.labels).toEqual({
      tier: 'front',
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(slice?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Service',
      name: 'web',
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(slice?.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toBeDefined();
    expect(slice?.addressType).toBe('IPv4');
    expect(slice?.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const byName = new Map((slice?.endpoints ?? []).map((e) => [e.targetRef?.name, e]));
    expect(byName.get('web-1')).toMatchObject({
      addresses: ['10.1.0.1'],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'n1',
      zone: 'zone-a',
    });
    expect(byName.get('web-2')).toMatchObject({
      addresses: ['10.1.0.2'],
      conditions: { ready: false, serving: false, terminating: false },
      nodeName: 'n2',
    });
    expect(byName.get('web-2')?.zone).toBeUndefined();

    // kubectl sees the same.
    const k = await env.kubectl(
      '-n',
      NS,
      'get',
      'endpoints',
      'web',
      '-o',
      'jsonpath={.subsets[0].addresses[0].ip}',
    );
    expect(k.stdout).toBe('10.1.0.1');
  });

  it('follows readiness changes', async () => {
    const pod = await pods.get('web-2', { namespace: NS });
    await setReady(pod, '10.1.0.2', true);
    await until('both ready in Endpoints', async () => {
      const e = await endpoints.get('web', { namespace: NS });
      return e.subsets?.[0]?.addresses?.length === 2 && e.subsets[0].notReadyAddresses === undefined
        ? e
        : undefined;
    });
    await until('both ready in the slice', async () => {
      const [s] = await slicesOf('web');
      return s?.endpoints?.every((e) => e.conditions?.ready === true) === true ? s : undefined;
    });
  });

  it('resolves named ports per pod: a pod without the port goes to a slice without ports, not to Endpoints', async () => {
    await runPod('web-odd', { ip: '10.1.0.9', ready: true, portName: 'other' });
    const all = await until('a second slice for the pod without the port', async () => {
      const s = await slicesOf('web');
      return s.length === 2 ? s : undefined;
    });
    const portless = all.find((s) => (s.ports ?? []).length === 0);
    expect(portless?.endpoints?.map((e) => e.addresses?.[0])).toEqual(['10.1.0.9']);
    const e = await endpoints.get('web', { namespace: NS });
    const ips = (e.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
    expect(ips).not.toContain('10.1.0.9');
    await pods.delete('web-odd', { namespace: NS, gracePeriodSeconds: 0 });
    await until('the portless slice gone', async () =>
      (await slicesOf('web')).length === 1 ? true : undefined,
    );
  });

  it('marks a terminating pod terminating in the slice and drops it from Endpoints', async () => {
    await pods.delete('web-1', { namespace: NS, gracePeriodSeconds: 30 });
    const [slice] = await until('web-1 terminating', async () => {
      const s = await slicesOf('web');
      const e = s[0]?.endpoints?.find((x) => x.targetRef?.name === 'web-1');
      return e?.conditions?.terminating === true ? s : undefined;
    });
    const e1 = slice?.endpoints?.find((x) => x.targetRef?.name === 'web-1');
    expect(e1?.conditions).toEqual({ ready: false, serving: true, terminating: true });
    await until('web-1 out of Endpoints', async () => {
      const e = await endpoints.get('web', { namespace: NS });
      const ips = (e.subsets ?? []).flatMap((s) =>
        [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])].map((a) => a.ip),
      );
      return ips.includes('10.1.0.1') ? undefined : ips;
    });
    await pods.delete('web-1', { namespace: NS, gracePeriodSeconds: 0 });
  });

  it('splits endpoints over slices at --max-endpoints-per-slice', async () => {
    for (let i = 0; i < 5; i++)
      await runPod(`many-${i}`, { ip: `10.2.0.${i + 1}`, ready: true, labels: { app: 'many' } });
    await services.create({
      metadata: { name: 'many', namespace: NS },
      spec: { selector: { app: 'many' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const all = await until('5 endpoints in slices', async () => {
      const s = await slicesOf('many');
      return s.reduce((n, x) => n + (x.endpoints?.length ?? 0), 0) === 5 ? s : undefined;
    });
    expect(all).toHaveLength(3);
    for (const s of all) expect(s.endpoints?.length).toBeLessThanOrEqual(2);
  });

  it('publishes not-ready addresses as ready when asked, with hostnames for its subdomain', async () => {
    await runPod('db-0', {
      ip: '10.3.0.1',
      ready: false,
      labels: { app: 'db' },
      hostname: 'db-0',
      subdomain: 'db',
    });
    await services.create({
      metadata: { name: 'db', namespace: NS },
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector: { app: 'db' },
        ports: [{ port: 5432, targetPort: 8080 }],
      },
    });
    const ep = await until('db Endpoints', async () => {
      const e = await endpoints.get('db', { namespace: NS });
      return e.subsets?.[0]?.addresses?.length === 1 ? e : undefined;
    });
    expect(ep.subsets?.[0]?.addresses?.[0]).toMatchObject({ ip: '10.3.0.1', hostname: 'db-0' });
    expect(ep.metadata.labels?.['service.kubernetes.io/headless']).toBe('');
    const [slice] = await until('db slice', async () => {
      const s = await slicesOf('db');
      return s[0]?.endpoints?.length === 1 ? s : undefined;
    });
    expect(slice?.endpoints?.[0]).toMatchObject({
      hostname: 'db-0',
      conditions: { ready: true, serving: false, terminating: false },
    });
    expect(slice?.metadata.labels?.['service.kubernetes.io/headless']).toBe('');
  });
});

describe('bad and odd input', () => {
  it('a selector matching nothing gets empty Endpoints and one placeholder slice', async () => {
    await services.create({
      metadata: { name: 'nobody', namespace: NS },
      spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] },
    });
    const ep = await until('nobody Endpoints', async () => endpoints.get('nobody', { namespace: NS }));
    expect(ep.subsets ?? []).toEqual([]);
    const [slice, ...rest] = await until('placeholder', async () => {
      const s = await slicesOf('nobody');
      return s.length > 0 ? s : undefined;
    });
    expect(rest).toEqual([]);
    expect(slice?.endpoints ?? []).toEqual([]);
    expect(slice?.ports ?? []).toEqual([]);
  });

  it('a named target port no pod has leaves the pods out of Endpoints without failing', async () => {
    await runPod('badport-0', { ip: '10.4.0.1', ready: true, labels: { app: 'badport' } });
    await services.create({
      metadata: { name: 'badport', namespace: NS },
      spec: { selector: { app: 'badport' }, ports: [{ name: 'x', port: 80, targetPort: 'no-such-port' }] },
    });
    const ep = await until('badport Endpoints', async () => endpoints.get('badport', { namespace: NS }));
    expect(ep.subsets ?? []).toEqual([]);
    const [slice] = await until('badport slice', async () => {
      const s = await slicesOf('badport');
      return s[0]?.endpoints?.length === 1 ? s : undefined;
    });
    expect(slice?.ports ?? []).toEqual([]);
  });

  it('Services without a selector, and default/kubernetes, get nothing from the controllers', async () => {
    await services.create({ metadata: { name: 'manual', namespace: NS }, spec: { ports: [{ port: 80 }] } });
    // Give the controllers time to (wrongly) act: the web service syncs after it.
    await runPod('web-late', { ip: '10.1.0.7', ready: true });
    await until('web-late in web Endpoints', async () => {
      const e = await endpoints.get('web', { namespace: NS });
      return (e.subsets ?? []).some((s) => (s.addresses ?? []).some((a) => a.ip === '10.1.0.7'))
        ? true
        : undefined;
    });
    expect(await slicesOf('manual')).toEqual([]);
    await expect(endpoints.get('manual', { namespace: NS })).rejects.toMatchObject({ code: 404 });
    const k8s = await slices.list({
      namespace: 'default',
      labelSelector: 'endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io',
    });
    expect(k8s.items).toEqual([]);
    // The API server's own Endpoints are as it wrote them.
    const kep = await endpoints.get('kubernetes', { namespace: 'default' });
    expect(kep.metadata.resourceVersion).toBe(kubernetesEndpointsRv);
  });

  it('deleting a Service deletes its Endpoints', async () => {
    await services.delete('nobody', { namespace: NS });
    await until('nobody Endpoints gone', async () => {
      try {
        await endpoints.get('nobody', { namespace: NS });
        return undefined;
      } catch {
        return true;
      }
    });
    expect(env.errors.filter((e) => !e.includes('node not known'))).toEqual([]);
  });
});
