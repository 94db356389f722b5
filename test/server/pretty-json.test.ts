/**
 * Pretty JSON, as kube-apiserver v1.33 gives it (read from it first with the same requests):
 * `?pretty=true`, or a `curl`, `Wget` or browser User-Agent without the parameter, indents JSON
 * answers by two spaces with no trailing newline (Go's json.MarshalIndent): objects, lists,
 * Status errors and discovery. `?pretty=false` wins over the user agent. Compact JSON ends with
 * the newline of Go's json.Encoder, as kube's does, and Tables are indented like the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;

async function get(
  path: string,
  userAgent = 'capstan-test',
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    headers: { 'user-agent': userAgent, ...headers },
  });
  return { status: res.status, body: res.body };
}

const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };

/** Go's MarshalIndent of the same document (no HTML characters in these answers). */
const indented = (body: string): string => JSON.stringify(JSON.parse(body), null, 2);

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
});
afterAll(async () => server?.close());

describe('pretty JSON', () => {
  it('indents an object for ?pretty=true, and only then', async () => {
    const plain = await get('/api/v1/namespaces/default');
    expect(plain.body.startsWith('{"kind":"Namespace"')).toBe(true);
    const pretty = await get('/api/v1/namespaces/default?pretty=true');
    expect(pretty.status).toBe(200);
    expect(
      pretty.body.startsWith('{\n  "kind": "Namespace",\n  "apiVersion": "v1",\n  "metadata": {\n'),
    ).toBe(true);
    expect(pretty.body).toBe(indented(plain.body));
    expect(pretty.body.endsWith('}')).toBe(true);
  });

  it('indents for curl, Wget and browsers unless ?pretty=false', async () => {
    for (const ua of ['curl/8.5.0', 'Wget/1.21', 'Mozilla/5.0 (X11)']) {
      const r = await get('/api/v1/namespaces/default', ua);
      expect(r.body, ua).toBe(indented(r.body));
      expect(r.body.includes('\n'), ua).toBe(true);
    }
    const off = await get('/api/v1/namespaces/default?pretty=false', 'curl/8.5.0');
    expect(off.body.startsWith('{"kind":"Namespace"')).toBe(true);
  });

  it('indents lists, Status errors and discovery', async () => {
    const list = await get('/api/v1/namespaces?pretty=1');
    expect(list.body).toBe(indented(list.body));
    expect(list.body).toContain('\n  "items": [\n    {\n');
    const missing = await get('/api/v1/namespaces/nope?pretty=true');
    expect(missing.status).toBe(404);
    expect(missing.body).toBe(indented(missing.body));
    expect(missing.body).toContain('\n  "reason": "NotFound",\n');
    const discovery = await get('/api?pretty=true');
    expect(discovery.body).toBe(indented(discovery.body));
    expect(discovery.body).toContain('\n  "versions": [\n    "v1"\n  ],\n');
  });

  it('indents Tables', async () => {
    const plain = await get('/api/v1/namespaces', 'capstan-test', TABLE);
    expect(plain.body.startsWith('{"kind":"Table"')).toBe(true);
    const pretty = await get('/api/v1/namespaces', 'curl/8.5.0', TABLE);
    expect(pretty.body.startsWith('{\n  "kind": "Table",\n')).toBe(true);
    // The Age cells move between the two answers: the form, not the bytes, is compared.
    expect(pretty.body).toBe(indented(pretty.body));
    expect(JSON.parse(pretty.body)).toMatchObject({
      columnDefinitions: (JSON.parse(plain.body) as { columnDefinitions: unknown }).columnDefinitions,
    });
  });
});

describe('compact JSON', () => {
  it("ends every document with kube's newline: objects, lists, Tables, Status errors, discovery", async () => {
    for (const [path, headers] of [
      ['/api/v1/namespaces/default', {}],
      ['/api/v1/namespaces', {}],
      ['/api/v1/namespaces?limit=1', {}],
      ['/api/v1/namespaces', TABLE],
      ['/api/v1/namespaces/nope', {}],
      ['/api/v1/namespaces/default/foos', {}],
      ['/api', {}],
      ['/apis', {}],
      ['/apis/apps/v1', {}],
    ] as const) {
      const r = await get(path, 'capstan-test', headers);
      expect(r.body.endsWith('}\n'), path).toBe(true);
      expect(r.body.indexOf('\n'), path).toBe(r.body.length - 1);
    }
    const created = await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'newline' } }),
    });
    expect(created.status).toBe(201);
    expect(created.body.endsWith('}\n')).toBe(true);
    // Indented answers end at the closing brace, as Go's MarshalIndent.
    expect((await get('/api/v1/namespaces/default?pretty=true')).body.endsWith('\n}')).toBe(true);
  });
});
