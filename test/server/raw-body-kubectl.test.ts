/**
 * `kubectl create --raw PATH -f FILE` and `kubectl replace --raw` stream the file over HTTP/2
 * with neither Content-Length nor Content-Type. kube-apiserver reads such a body as JSON (its
 * first serializer's media type); so does Capstan, with stock kubectl 1.27 and 1.33.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlOutput } from '../support/kubectl.js';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

type Json = Record<string, unknown>;

let server: TestServer;
let admin: AdminTls;
let dir: string;

const ns = '/api/v1/namespaces/default';
const metadata = (o: Json): Json => o['metadata'] as Json;

beforeAll(async () => {
  server = await startTestServer();
  admin = adminTls(server.kubeconfigPath);
  dir = await mkdtemp(join(tmpdir(), 'capstan-raw-'));
}, 60_000);
afterAll(async () => {
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function expectRead(path: string, answer: Json): Promise<void> {
  const res = await adminJson(`${server.url}${path}`, admin, 'GET');
  expect(res.json).toEqual(answer);
}

describe('kubectl create --raw -f', () => {
  it.each(['1.27', '1.33'] as const)(
    'kubectl %s: a file sent with no Content-Type is read as JSON',
    async (version) => {
      const file = join(dir, `cm-${version}.json`);
      const name = `raw-${version.replace('.', '-')}`;
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name },
          data: { k: 'v' },
        }),
      );
      const out = await kubectlOutput(
        version,
        ['create', '--raw', `${ns}/configmaps`, '-f', file],
        server.kubeconfigPath,
      );
      const created = JSON.parse(out) as Json;
      expect(metadata(created)['name']).toBe(name);
      expect(created['data']).toEqual({ k: 'v' });
      const replaced = await kubectlOutput(
        version,
        ['replace', '--raw', `${ns}/configmaps/${name}`, '-f', file],
        server.kubeconfigPath,
      );
      expect(metadata(JSON.parse(replaced) as Json)['name']).toBe(name);
      await expectRead(`${ns}/configmaps/${name}`, JSON.parse(replaced) as Json);
    },
  );
});
