/**
 * `kubectl get -w` (oldest and newest installed versions) shows creates, updates and deletes as
 * they happen, against a whole `capstan server` with its watch cache.
 */
import { spawn } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlPath, startTestServer, type KubectlVersion, type TestServer } from '../support/server.js';

const VERSIONS = (['1.27', '1.33'] as const).filter((v: KubectlVersion) => kubectlPath(v) !== undefined);

let server: TestServer;
beforeAll(async () => {
  if (VERSIONS.length > 0) server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe.skipIf(VERSIONS.length === 0).each(VERSIONS)('kubectl %s get -w', (version) => {
  it('prints ADDED, MODIFIED and DELETED events as they happen', async () => {
    const name = `kw-${version.replace('.', '-')}`;
    const child = spawn(
      kubectlPath(version) as string,
      [
        '--kubeconfig',
        server.kubeconfigPath,
        'get',
        'configmaps',
        '-n',
        'default',
        '-w',
        '--output-watch-events',
        `--field-selector=metadata.name=${name}`,
      ],
      { env: { ...process.env, KUBECONFIG: '' } },
    );
    let out = '';
    let err = '';
    const waiters: { re: RegExp; resolve: () => void }[] = [];
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      for (const w of waiters) if (w.re.test(out)) w.resolve();
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const seen = (re: RegExp): Promise<void> =>
      new Promise((resolve, reject) => {
        if (re.test(out)) return resolve();
        waiters.push({ re, resolve });
        setTimeout(() => reject(new Error(`no ${re} in: ${out} ${err}`)), 15_000).unref();
      });
    try {
      const core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
      // kubectl lists first; a create after its watch is open shows as ADDED.
      await new Promise((r) => setTimeout(r, 1500));
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name }, data: { a: '1' } },
      });
      await seen(new RegExp(`ADDED\\s+${name}`));
      await core.replaceNamespacedConfigMap({
        name,
        namespace: 'default',
        body: { metadata: { name }, data: { a: '1', b: '2' } },
      });
      await seen(new RegExp(`MODIFIED\\s+${name}`));
      await core.deleteNamespacedConfigMap({ name, namespace: 'default' });
      await seen(new RegExp(`DELETED\\s+${name}`));
      expect(out).toMatch(
        new RegExp(`ADDED\\s+${name}[\\s\\S]*MODIFIED\\s+${name}[\\s\\S]*DELETED\\s+${name}`),
      );
    } finally {
      child.kill();
    }
  });
});
