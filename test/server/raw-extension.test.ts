/**
 * A ControllerRevision's `data` (a RawExtension) as Go clients read it back: the key order it
 * was written in, its nulls, and Go's escaping of `<`, `>` and `&`, since kube's controllers and
 * kubectl compare these bytes with the `json.Marshal` output of their own template (kube's
 * `daemon.Match`, kubectl's DaemonSet rollback). Read raw through kubectl, in JSON, from a
 * server started by the test on its default (protobuf) storage.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

/** The revision data bytes a Go client writes for a template running `sh -c "a && b"`. */
const DATA =
  '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"a"}},' +
  '"spec":{"containers":[{"command":["sh","-c","a \\u0026\\u0026 b \\u003e /dev/null"],"image":"busybox","name":"c"}]}}}}';

describe('a RawExtension read back', () => {
  it('keeps the order, the nulls and Go’s escaping of the data written', async () => {
    const body = `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r1","namespace":"default"},"revision":1,"data":${DATA}}`;
    const file = join(mkdtempSync(join(tmpdir(), 'raw-ext-')), 'cr.json');
    writeFileSync(file, body);
    const created = await runKubectl(
      '1.33',
      ['create', '--raw', '/apis/apps/v1/namespaces/default/controllerrevisions', '-f', file],
      server.kubeconfigPath,
    );
    expect(created.code, created.stderr).toBe(0);
    const res = await runKubectl(
      '1.33',
      ['get', '--raw', '/apis/apps/v1/namespaces/default/controllerrevisions/r1'],
      server.kubeconfigPath,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`"data":${DATA}`);
  });
});
