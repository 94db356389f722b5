/**
 * What kube-apiserver v1.33 fills in on writes beyond the documented defaults, each checked
 * against kube-apiserver v1.33.13 with the same requests:
 * - `metadata.generation` of Pods (1, +1 per spec change and on graceful deletion, not on
 *   binding), PodTemplates (1, +1 per template change), PriorityClasses (1, never bumped) and
 *   EndpointSlices (1, +1 per change of anything but metadata, labels included);
 * - a Node's `podCIDR` and `podCIDRs` kept together (kube's conversion);
 * - a DaemonSet's `deprecated.daemonset.template.generation` annotation: the client's value when
 *   at least 1, bumped with the template, and owned by the creator (kube's conversion writes it
 *   before the field manager runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

let server: TestServer;
let admin: AdminTls;

interface Obj {
  metadata: {
    generation?: number;
    annotations?: Record<string, string>;
    managedFields?: Array<{ manager: string; fieldsV1: Record<string, unknown> }>;
  };
  spec?: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown, type = 'application/json'): Promise<Obj> {
  const res = await adminJson(`${server.url}${path}`, admin, method, body, { 'content-type': type });
  expect(res.status, res.text).toBeLessThan(300);
  return res.json as unknown as Obj;
}

const merge = (path: string, body: unknown): Promise<Obj> =>
  call('PATCH', path, body, 'application/strategic-merge-patch+json');

beforeAll(async () => {
  server = await startTestServer();
  admin = adminTls(server.kubeconfigPath);
  await call('POST', '/api/v1/namespaces', { metadata: { name: 'fill' } });
}, 60_000);
afterAll(async () => server?.close());

describe('metadata.generation', () => {
  it('of a Pod: 1, bumped by a spec change and a graceful delete, not by labels or a binding', async () => {
    await call('POST', '/api/v1/nodes', { metadata: { name: 'fill-node' } });
    const pods = '/api/v1/namespaces/fill/pods';
    const created = await call('POST', pods, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    expect(created.metadata.generation).toBe(1);
    expect((await merge(`${pods}/p`, { metadata: { labels: { a: 'b' } } })).metadata.generation).toBe(1);
    await call('POST', `${pods}/p/binding`, {
      metadata: { name: 'p' },
      target: { kind: 'Node', name: 'fill-node' },
    });
    expect((await call('GET', `${pods}/p`)).metadata.generation).toBe(1);
    const image = await merge(`${pods}/p`, { spec: { containers: [{ name: 'c', image: 'y' }] } });
    expect(image.metadata.generation).toBe(2);
    await call('DELETE', `${pods}/p`);
    expect((await call('GET', `${pods}/p`)).metadata.generation).toBe(3);
  });

  it('of a PodTemplate: 1, bumped by a template change only', async () => {
    const path = '/api/v1/namespaces/fill/podtemplates';
    const created = await call('POST', path, {
      metadata: { name: 'pt' },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    expect(created.metadata.generation).toBe(1);
    expect((await merge(`${path}/pt`, { metadata: { labels: { x: 'y' } } })).metadata.generation).toBe(1);
    expect(
      (await merge(`${path}/pt`, { template: { metadata: { labels: { c: 'd' } } } })).metadata.generation,
    ).toBe(2);
  });

  it('of a PriorityClass: 1, whatever changes', async () => {
    const path = '/apis/scheduling.k8s.io/v1/priorityclasses';
    expect((await call('POST', path, { metadata: { name: 'fill-pc' }, value: 5 })).metadata.generation).toBe(
      1,
    );
    expect((await merge(`${path}/fill-pc`, { description: 'd' })).metadata.generation).toBe(1);
  });

  it('of an EndpointSlice: 1, bumped by its endpoints and by its labels', async () => {
    const path = '/apis/discovery.k8s.io/v1/namespaces/fill/endpointslices';
    const created = await call('POST', path, {
      metadata: { name: 'e' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.1.1'] }],
      ports: [{ port: 80 }],
    });
    expect(created.metadata.generation).toBe(1);
    const patch = (body: unknown): Promise<Obj> =>
      call('PATCH', `${path}/e`, body, 'application/merge-patch+json');
    expect((await patch({ endpoints: [{ addresses: ['10.1.1.2'] }] })).metadata.generation).toBe(2);
    expect((await patch({ metadata: { labels: { a: 'b' } } })).metadata.generation).toBe(3);
    expect((await patch({ metadata: { annotations: { a: 'b' } } })).metadata.generation).toBe(3);
  });
});

describe("kube's conversions and preparations", () => {
  it("keeps a Node's podCIDR and podCIDRs together", async () => {
    const one = await call('POST', '/api/v1/nodes', {
      metadata: { name: 'n-one' },
      spec: { podCIDR: '10.244.0.0/24' },
    });
    expect([one.spec?.['podCIDR'], one.spec?.['podCIDRs']]).toEqual(['10.244.0.0/24', ['10.244.0.0/24']]);
    const many = await call('POST', '/api/v1/nodes', {
      metadata: { name: 'n-many' },
      spec: { podCIDRs: ['10.244.1.0/24'] },
    });
    expect([many.spec?.['podCIDR'], many.spec?.['podCIDRs']]).toEqual(['10.244.1.0/24', ['10.244.1.0/24']]);
  });

  it("keeps a DaemonSet's template generation from the client, and its creator owns it", async () => {
    const path = '/apis/apps/v1/namespaces/fill/daemonsets';
    const body = (name: string, annotations?: Record<string, string>): unknown => ({
      metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
      spec: {
        selector: { matchLabels: { a: name } },
        template: { metadata: { labels: { a: name } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    const annotation = 'deprecated.daemonset.template.generation';
    const given = await call('POST', `${path}?fieldManager=maker`, body('d5', { [annotation]: '5' }));
    expect(given.metadata.annotations?.[annotation]).toBe('5');
    const fields = given.metadata.managedFields?.find((e) => e.manager === 'maker')?.fieldsV1;
    expect(fields?.['f:metadata']).toEqual({ 'f:annotations': { '.': {}, [`f:${annotation}`]: {} } });
    const bumped = await merge(`${path}/d5`, {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'x:2' }] } } },
    });
    expect(bumped.metadata.annotations?.[annotation]).toBe('6');
    const plain = await call('POST', path, body('d1'));
    expect(plain.metadata.annotations?.[annotation]).toBe('1');
  });
});
