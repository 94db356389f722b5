/**
 * The kubectl acceptance suite on one backend (not run directly; leveldb.test.ts and
 * etcd.test.ts call it): one server shared by every kubectl version the machine has, the
 * versions one after another (session.case.ts, then apply-session.case.ts for field ownership),
 * then the data read back through a restart of the server on the same data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, KUBECTL_VERSIONS, type TestServer } from '../support/server.js';
import { applySession } from './apply-session.case.js';
import { kubectlSession } from './session.case.js';
import type { Backend } from './support/backends.js';
import { items, Kubectl, lines, pick } from './support/kubectl.js';
import { APP_MANIFEST, isClusterMade, manifestObjects } from './support/manifest.js';

const OLDEST = KUBECTL_VERSIONS[0];
const NEWEST = KUBECTL_VERSIONS[KUBECTL_VERSIONS.length - 1] ?? OLDEST;

/** Registers the whole suite on `backend`. */
export function kubectlSuite(backend: Backend): void {
  describe(`kubectl on ${backend.name}`, () => {
    let server: TestServer | undefined;
    const current = (): TestServer => {
      if (server === undefined) throw new Error('the suite server did not start');
      return server;
    };

    beforeAll(async () => {
      server = await backend.start();
    });
    afterAll(async () => {
      await server?.close();
      await backend.cleanup();
    });

    for (const version of KUBECTL_VERSIONS) {
      kubectlSession(version, current);
      applySession(version, current);
    }

    it('answers an invalid object with 422 Invalid and one cause per field', async () => {
      const s = current();
      const body = JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'Bad_Name', namespace: 'default' },
        spec: {
          replicas: -1,
          selector: { matchLabels: { app: 'a' } },
          template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      });
      const res = await adminFetch(
        `${s.url}/apis/apps/v1/namespaces/default/deployments`,
        adminTls(s.kubeconfigPath),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        },
      );
      expect(res.status).toBe(422);
      const status = JSON.parse(res.body) as unknown;
      expect(pick(status, 'kind')).toBe('Status');
      expect(pick(status, 'reason')).toBe('Invalid');
      expect(pick(status, 'details', 'kind')).toBe('Deployment');
      expect(pick(status, 'details', 'group')).toBe('apps');
      const causes = pick(status, 'details', 'causes');
      expect(causes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'metadata.name', reason: 'FieldValueInvalid' }),
          expect.objectContaining({ field: 'spec.replicas', reason: 'FieldValueInvalid' }),
        ]),
      );
    });

    it('keeps the data through a server restart on the same store', async () => {
      const writer = new Kubectl(NEWEST, () => current().kubeconfigPath);
      const reader = new Kubectl(OLDEST, () => current().kubeconfigPath);
      const app = manifestObjects(APP_MANIFEST);
      const resources = [...new Set(app.map((o) => o.resource))].join(',');
      await writer.ok('apply', '-f', APP_MANIFEST);
      await writer.ok('scale', 'deployment', 'web', '-n', 'shop', '--replicas=4');
      const before = items(await writer.json('get', resources, '-A'));
      const shop = before.filter(
        (o) =>
          (pick(o, 'metadata', 'namespace') === 'shop' || pick(o, 'metadata', 'name') === 'shop') &&
          !isClusterMade(o),
      );
      expect(shop).toHaveLength(app.length);

      await current().close();
      server = undefined;
      server = await backend.start();

      // Every object reads back as it was: content, uid, timestamps and resourceVersion. The
      // server's own default/kubernetes objects follow its new port (kube reconciles them too).
      const own = (o: unknown): boolean =>
        pick(o, 'metadata', 'namespace') === 'default' && pick(o, 'metadata', 'name') === 'kubernetes';
      const after = items(await reader.json('get', resources, '-A'));
      expect(after.filter((o) => !own(o))).toEqual(before.filter((o) => !own(o)));
      expect(pick(await reader.json('get', 'deployment', 'web', '-n', 'shop'), 'spec', 'replicas')).toBe(4);

      // Writes continue above every revision the old server handed out.
      const newest = before.reduce<bigint>((max, o) => {
        const rv = BigInt(String(pick(o, 'metadata', 'resourceVersion')));
        return rv > max ? rv : max;
      }, 0n);
      expect(
        lines(await reader.ok('label', 'configmap', 'shop-config', '-n', 'shop', 'restarted=yes')),
      ).toEqual(['configmap/shop-config labeled']);
      const relabeled = await reader.json('get', 'configmap', 'shop-config', '-n', 'shop');
      expect(BigInt(String(pick(relabeled, 'metadata', 'resourceVersion')))).toBeGreaterThan(newest);

      expect(lines(await reader.ok('delete', 'namespace', 'shop'))).toEqual(['namespace "shop" deleted']);
      expect(await reader.fails('get', 'namespace', 'shop')).toContain('namespaces "shop" not found');
    });
  });
}
