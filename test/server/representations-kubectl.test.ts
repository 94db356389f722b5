/**
 * Stock kubectl through the representations (issue 5): `kubectl create configmap` sends its body
 * as protobuf and reads the protobuf answer; `kubectl get` asks for Tables; `-o yaml` reads JSON;
 * `kubectl delete` sends DeleteOptions. On the oldest and newest kubectl the machine has.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  kubectlPath,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';

const VERSIONS: readonly KubectlVersion[] = ['1.27', '1.33'];
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe.each(VERSIONS)('kubectl %s', (version) => {
  const installed = kubectlPath(version) !== undefined;
  const name = `rep-${version.replace('.', '-')}`;
  const run = (args: readonly string[]) => runKubectl(version, args, server.kubeconfigPath);

  it.skipIf(!installed)('creates a configmap with a protobuf body and reads it back', async () => {
    const created = await run(['create', 'configmap', name, '--from-literal=a=b', '-v=8']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`configmap/${name} created`);
    // kubectl 1.33 sends protobuf and reads the protobuf answer (-v=8 logs both headers);
    // 1.27's `create configmap` still speaks JSON.
    const protobufTypes = created.stderr.match(/Content-Type: application\/vnd\.kubernetes\.protobuf/gi);
    expect(protobufTypes?.length ?? 0).toBeGreaterThanOrEqual(version === '1.27' ? 0 : 2);
    const got = await run(['get', 'configmap', name, '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
  });

  it.skipIf(!installed)('prints the Table kubectl get asks for', async () => {
    const got = await run(['get', 'configmaps']);
    expect(got.code, got.stderr).toBe(0);
    const [header = '', ...rows] = got.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s/);
    expect(rows.some((r) => r.startsWith(`${name} `))).toBe(true);
  });

  it.skipIf(!installed)('watches with Tables (get -w)', async () => {
    // The watch ends when the server's timeoutSeconds (from --request-timeout) runs out.
    const watched = await run(['get', 'configmaps', '-w', '--request-timeout=2s']);
    const lines = watched.stdout.trimEnd().split('\n');
    expect(lines[0], watched.stderr).toMatch(/^NAME\s/);
    expect(lines.some((l) => l.startsWith(`${name} `))).toBe(true);
  });

  it.skipIf(!installed)('prints YAML and deletes', async () => {
    const yaml = await run(['get', 'configmap', name, '-o', 'yaml']);
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(yaml.stdout).toMatch(/^kind: ConfigMap$/m);
    const deleted = await run(['delete', 'configmap', name]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`configmap "${name}" deleted`);
  });
});
