/**
 * A cluster-scoped CRD (widgets.example.dev) against a real server: the default Age column,
 * `selectableFields` in field selectors (and kube's 400 for other fields), server-side apply of
 * custom objects (managedFields, conflicts between managers), and a second CRD whose kind is
 * taken: NamesAccepted False with kube's conflict reason and message, never served.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.dev/v1alpha1/widgets';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

async function call(
  path: string,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return adminJson(`${server.url}${path}`, tls, method, body, headers);
}

type Cond = { type: string; status: string; reason?: string; message?: string };

async function waitCondition(name: string, type: string, status: string): Promise<Cond[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await call(`${CRD_PATH}/${name}`);
    const conds = (res.json['status'] as { conditions?: Cond[] } | undefined)?.conditions ?? [];
    if (conds.some((c) => c.type === type && c.status === status)) return conds;
    if (Date.now() > deadline) throw new Error(`${name}: no ${type}=${status} in ${JSON.stringify(conds)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  const crd = parse(readFileSync('fixtures/crds/widget-cluster.yaml', 'utf8')) as unknown;
  expect((await call(CRD_PATH, 'POST', crd)).status).toBe(201);
  await waitCondition('widgets.example.dev', 'Established', 'True');
  for (const [name, color] of [
    ['a', 'red'],
    ['b', 'blue'],
  ] as const) {
    const res = await call(WIDGETS, 'POST', { metadata: { name }, spec: { color } });
    expect(res.status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('a cluster-scoped CRD', () => {
  it('prints Name and the default Age column', async () => {
    const table = await call(WIDGETS, 'GET', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(
      (table.json['columnDefinitions'] as { name: string; type: string }[]).map((c) => [c.name, c.type]),
    ).toEqual([
      ['Name', 'string'],
      ['Age', 'date'],
    ]);
  });

  it('selects on selectableFields and refuses other fields', async () => {
    const red = await call(`${WIDGETS}?fieldSelector=spec.color%3Dred`);
    expect((red.json['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'a',
    ]);
    const notRed = await call(`${WIDGETS}?fieldSelector=spec.color!%3Dred,metadata.name!%3Dx`);
    expect((notRed.json['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'b',
    ]);
    const bad = await call(`${WIDGETS}?fieldSelector=spec.size%3D1`);
    expect(bad.status).toBe(400);
    expect(bad.json['message']).toBe('field label not supported: spec.size');
  });

  it('server-side applies custom objects with ownership and conflicts', async () => {
    const apply = (manager: string, body: unknown, force = false): Promise<Reply> =>
      call(
        `${WIDGETS}/c?fieldManager=${manager}${force ? '&force=true' : ''}`,
        'PATCH',
        JSON.stringify(body),
        {
          'content-type': 'application/apply-patch+yaml',
        },
      );
    const doc = {
      apiVersion: 'example.dev/v1alpha1',
      kind: 'Widget',
      metadata: { name: 'c' },
      spec: { color: 'green', size: 2 },
    };
    const created = await apply('alice', doc);
    expect(created.status).toBe(201);
    const managed = (
      created.json['metadata'] as {
        managedFields: { manager: string; operation: string; fieldsV1: unknown }[];
      }
    ).managedFields;
    expect(managed).toHaveLength(1);
    expect(managed[0]).toMatchObject({
      manager: 'alice',
      operation: 'Apply',
    });
    const spec = (managed[0]?.fieldsV1 as { 'f:spec': Record<string, unknown> })['f:spec'];
    expect(spec['f:color']).toEqual({});
    expect(spec['f:size']).toEqual({});
    const conflict = await apply('bob', { ...doc, spec: { color: 'black' } });
    expect(conflict.status).toBe(409);
    expect(conflict.json['reason']).toBe('Conflict');
    const forced = await apply('bob', { ...doc, spec: { color: 'black' } }, true);
    expect(forced.status).toBe(200);
    expect(forced.json['spec']).toEqual({ color: 'black', size: 2 });
  });
});

describe('a CRD whose kind is taken', () => {
  it('reports the conflict, keeps only the free names and is not served', async () => {
    const crd = parse(readFileSync('fixtures/crds/gadget-conflict.yaml', 'utf8')) as unknown;
    expect((await call(CRD_PATH, 'POST', crd)).status).toBe(201);
    const conds = await waitCondition('gadgets.example.dev', 'NamesAccepted', 'False');
    expect(conds.find((c) => c.type === 'NamesAccepted')).toMatchObject({
      // kube checks the kind, then the list kind; the last conflict found is the one reported.
      reason: 'ListKindConflict',
      message: '"WidgetList" is already in use',
    });
    expect(conds.find((c) => c.type === 'Established')).toMatchObject({
      status: 'False',
      reason: 'NotAccepted',
    });
    const crdNow = await call(`${CRD_PATH}/gadgets.example.dev`);
    expect((crdNow.json['status'] as { acceptedNames: unknown }).acceptedNames).toEqual({
      plural: 'gadgets',
      kind: '',
    });
    expect((await call('/apis/example.dev/v1/namespaces/default/gadgets')).status).toBe(404);
  });
});
