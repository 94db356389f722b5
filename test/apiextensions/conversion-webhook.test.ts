/**
 * Multi-version custom resources: a CRD with two versions and a conversion webhook served by
 * the test over HTTPS (a CA made here, trusted through `caBundle`). Objects are stored in the
 * storage version whatever version they were written in, every read is in the requested
 * version, the webhook gets kube's ConversionReview v1, and a webhook that is down is kube's
 * 500. A second CRD with strategy None converts by changing apiVersion only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adminFetch, adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from '../authn/support.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;
let webhook: LocalHttps;
const reviews: { desiredAPIVersion: string; count: number }[] = [];

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

async function call(path: string, method = 'GET', body?: unknown): Promise<Reply> {
  return adminJson(`${server.url}${path}`, tls, method, body);
}

type Obj = { apiVersion: string; spec: Record<string, unknown>; metadata: Record<string, unknown> };

/** The test's conversion: v1 spec.color <-> v2 spec.colour. */
function convert(obj: Obj, desired: string): Obj {
  const { color, colour, ...rest } = obj.spec as { color?: string; colour?: string };
  const value = color ?? colour;
  const spec = desired.endsWith('/v2') ? { ...rest, colour: value } : { ...rest, color: value };
  return { ...obj, apiVersion: desired, spec };
}

async function waitEstablished(name: string): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const crd = await call(`${CRD_PATH}/${name}`);
    const conds = (crd.json['status'] as { conditions?: { type: string; status: string }[] } | undefined)
      ?.conditions;
    if (conds?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`${name} not Established`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  const ca = await makeCa('conversion-webhook-ca');
  const cert = await issue(ca, { commonName: 'webhook' }, 'server', { ipAddresses: ['127.0.0.1'] });
  webhook = await startLocalHttps(cert, (req, body, res) => {
    const review = JSON.parse(body) as {
      apiVersion: string;
      kind: string;
      request: { uid: string; desiredAPIVersion: string; objects: Obj[] };
    };
    if (
      req.url !== '/convert' ||
      review.kind !== 'ConversionReview' ||
      review.apiVersion !== 'apiextensions.k8s.io/v1'
    ) {
      sendJson(res, 400, {});
      return;
    }
    reviews.push({
      desiredAPIVersion: review.request.desiredAPIVersion,
      count: review.request.objects.length,
    });
    sendJson(res, 200, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: review.request.uid,
        result: { status: 'Success' },
        convertedObjects: review.request.objects.map((o) => convert(o, review.request.desiredAPIVersion)),
      },
    });
  });
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  const crd = parse(readFileSync('fixtures/crds/shirts-webhook.yaml', 'utf8')) as {
    spec: { conversion: { webhook: { clientConfig: Record<string, string> } } };
  };
  crd.spec.conversion.webhook.clientConfig = {
    url: `${webhook.url}/convert`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
  };
  expect((await call(CRD_PATH, 'POST', crd)).status).toBe(201);
  expect(
    (await call(CRD_PATH, 'POST', parse(readFileSync('fixtures/crds/hats-none.yaml', 'utf8')))).status,
  ).toBe(201);
  await waitEstablished('shirts.stable.example.com');
  await waitEstablished('hats.stable.example.com');
}, 60_000);

afterAll(async () => {
  await server?.close();
  await webhook?.close();
});

const V1 = '/apis/stable.example.com/v1/namespaces/default/shirts';
const V2 = '/apis/stable.example.com/v2/namespaces/default/shirts';

describe('a conversion webhook', () => {
  it('stores an object written as v2 in the storage version v1', async () => {
    const created = await call(V2, 'POST', { metadata: { name: 'tee' }, spec: { colour: 'red' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'stable.example.com/v2', spec: { colour: 'red' } });
    const { kv } = await server.store.get('/stable.example.com/shirts/default/tee');
    const stored = JSON.parse(Buffer.from(kv?.value ?? []).toString('utf8')) as Obj;
    expect(stored.apiVersion).toBe('stable.example.com/v1');
    expect(stored.spec).toEqual({ color: 'red' });
    expect(reviews).toContainEqual({ desiredAPIVersion: 'stable.example.com/v1', count: 1 });
  });

  it('reads every object in the requested version', async () => {
    await call(V1, 'POST', { metadata: { name: 'polo' }, spec: { color: 'blue' } });
    expect((await call(`${V1}/tee`)).json).toMatchObject({
      apiVersion: 'stable.example.com/v1',
      spec: { color: 'red' },
    });
    expect((await call(`${V2}/tee`)).json).toMatchObject({
      apiVersion: 'stable.example.com/v2',
      spec: { colour: 'red' },
    });
    const before = reviews.length;
    const list = await call(V2);
    const items = list.json['items'] as Obj[];
    expect(items.map((i) => [i.apiVersion, i.spec])).toEqual([
      ['stable.example.com/v2', { colour: 'blue' }],
      ['stable.example.com/v2', { colour: 'red' }],
    ]);
    // One review for the whole list.
    expect(reviews.slice(before)).toEqual([{ desiredAPIVersion: 'stable.example.com/v2', count: 2 }]);
  });

  it('patches through the requested version', async () => {
    const patched = await adminFetch(`${server.url}${V2}/polo`, tls, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { colour: 'green' } }),
    });
    expect(patched.status).toBe(200);
    expect((await call(`${V1}/polo`)).json['spec']).toEqual({ color: 'green' });
  });

  it('records the storage version in status.storedVersions', async () => {
    const crd = await call(`${CRD_PATH}/shirts.stable.example.com`);
    expect((crd.json['status'] as { storedVersions: string[] }).storedVersions).toEqual(['v1']);
  });

  it("answers kube's 500 when the webhook is down", async () => {
    await webhook.close();
    const res = await call(`${V2}/tee`);
    expect(res.status).toBe(500);
    expect(res.json['reason']).toBe('InternalError');
    expect(String(res.json['message'])).toContain(
      'conversion webhook for stable.example.com/v1, Kind=Shirt failed',
    );
  });
});

describe('conversion None', () => {
  it('changes only apiVersion', async () => {
    const created = await call('/apis/stable.example.com/v1beta1/namespaces/default/hats', 'POST', {
      metadata: { name: 'cap' },
      spec: { size: 7 },
    });
    expect(created.status).toBe(201);
    const { kv } = await server.store.get('/stable.example.com/hats/default/cap');
    expect((JSON.parse(Buffer.from(kv?.value ?? []).toString('utf8')) as Obj).apiVersion).toBe(
      'stable.example.com/v1',
    );
    const got = await call('/apis/stable.example.com/v1beta1/namespaces/default/hats/cap');
    expect(got.json).toMatchObject({ apiVersion: 'stable.example.com/v1beta1', spec: { size: 7 } });
  });
});
