/**
 * One kubectl version's session against a running server (not run directly; see suite.case.ts):
 * the application manifest applied and re-applied, read back in every output format, changed with
 * every write verb kubectl has for it, and deleted, namespace last. The steps share the server's
 * state and run in order; the session starts by removing a namespace a failed earlier session
 * may have left.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { kubectlPath, type KubectlVersion, type TestServer } from '../support/server.js';
import { expectedApiResources, KUBE_ROWS, parseApiResources } from './support/api-resources.js';
import { items, Kubectl, lines, nameColumn, pick } from './support/kubectl.js';
import { APP_MANIFEST, INVALID_MANIFEST, isClusterMade, manifestObjects } from './support/manifest.js';

const NS = 'shop';
const app = manifestObjects(APP_MANIFEST);
const namespaced = app.filter((o) => o.namespace === NS);
/** Every namespaced resource of the manifest, for one `kubectl get` (`configmaps,secrets,...`). */
const APP_RESOURCES = [...new Set(namespaced.map((o) => o.resource))].join(',');

/**
 * Kinds whose re-apply kubectl always reports `configured`, against kube-apiserver too, because
 * its three-way patch is never empty: a Secret's `stringData` is never read back (the server
 * moves it into `data`; kubernetes/kubernetes#87736), and a v1 PodDisruptionBudget's
 * `spec.selector` has patch strategy `replace`, so kubectl always sends it. The server must
 * still write nothing (the suite checks the resourceVersions).
 */
const ALWAYS_PATCHED = new Set(['Secret', 'PodDisruptionBudget']);

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `kind/name` → resourceVersion of the namespace and everything in it. */
async function resourceVersions(k: Kubectl): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const ns = await k.json('get', 'namespace', NS);
  out[`Namespace/${NS}`] = pick(ns, 'metadata', 'resourceVersion');
  for (const item of items(await k.json('get', APP_RESOURCES, '-n', NS))) {
    if (isClusterMade(item)) continue;
    out[`${String(pick(item, 'kind'))}/${String(pick(item, 'metadata', 'name'))}`] = pick(
      item,
      'metadata',
      'resourceVersion',
    );
  }
  return out;
}

/** Registers the session of `version` against the server `server()` returns at each step. */
export function kubectlSession(version: KubectlVersion, server: () => TestServer): void {
  describe(`kubectl ${version}`, () => {
    const k = new Kubectl(version, () => server().kubeconfigPath);

    beforeAll(async () => {
      // A missing binary is the first test's failure, not a hook error.
      if (kubectlPath(version) !== undefined) await k.ok('delete', 'namespace', NS, '--ignore-not-found');
    });

    it('is installed', () => {
      expect(kubectlPath(version), `kubectl ${version} is required`).toBeDefined();
    });

    it('api-resources lists every served kind with its short names, version and scope', async () => {
      const rows = parseApiResources(await k.ok('api-resources'));
      const expected = expectedApiResources();
      expect(rows).toHaveLength(expected.length);
      for (const row of expected) expect(rows).toContainEqual(row);
      for (const row of KUBE_ROWS) expect(rows).toContainEqual(row);
    });

    it('apply -f creates every object of the manifest', async () => {
      const out = await k.ok('apply', '-f', APP_MANIFEST);
      expect(lines(out)).toEqual(app.map((o) => `${o.ref} created`));
    });

    it('re-apply of the same manifest changes nothing', async () => {
      const before = await resourceVersions(k);
      expect(Object.keys(before)).toHaveLength(app.length);
      const out = await k.ok('apply', '-f', APP_MANIFEST);
      expect(lines(out)).toEqual(
        app.map((o) => `${o.ref} ${ALWAYS_PATCHED.has(o.kind) ? 'configured' : 'unchanged'}`),
      );
      expect(await resourceVersions(k)).toEqual(before);
    });

    it('get -o yaml shows stored content, server metadata and defaults', async () => {
      const cm: unknown = parseYaml(await k.ok('get', 'configmap', 'shop-config', '-n', NS, '-o', 'yaml'));
      expect(pick(cm, 'data')).toEqual({ LOG_LEVEL: 'info', FEATURES: 'cart,checkout' });
      expect(pick(cm, 'metadata', 'labels')).toEqual({ app: 'shop' });
      expect(pick(cm, 'metadata', 'resourceVersion')).toMatch(/^[1-9][0-9]*$/);
      expect(pick(cm, 'metadata', 'creationTimestamp')).toMatch(RFC3339);

      const secret: unknown = parseYaml(await k.ok('get', 'secret', 'shop-db', '-n', NS, '-o', 'yaml'));
      expect(pick(secret, 'type')).toBe('Opaque');
      expect(pick(secret, 'data')).toEqual({ password: Buffer.from('s3cr3t').toString('base64') });
      expect(pick(secret, 'stringData')).toBeUndefined();

      const ns: unknown = parseYaml(await k.ok('get', 'namespace', NS, '-o', 'yaml'));
      expect(pick(ns, 'status', 'phase')).toBe('Active');
      expect(pick(ns, 'spec', 'finalizers')).toEqual(['kubernetes']);
      expect(pick(ns, 'metadata', 'labels')).toEqual({
        team: 'storefront',
        'kubernetes.io/metadata.name': NS,
      });
    });

    it('get -o json shows the defaulted Deployment and Service', async () => {
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(d, 'apiVersion')).toBe('apps/v1');
      expect(pick(d, 'kind')).toBe('Deployment');
      expect(pick(d, 'metadata', 'uid')).toMatch(UUID);
      expect(pick(d, 'metadata', 'generation')).toBe(1);
      expect(pick(d, 'spec', 'replicas')).toBe(2);
      expect(pick(d, 'spec', 'strategy')).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
      });
      expect(pick(d, 'spec', 'revisionHistoryLimit')).toBe(10);
      expect(pick(d, 'spec', 'progressDeadlineSeconds')).toBe(600);
      const container = pick(d, 'spec', 'template', 'spec', 'containers', 0);
      expect(container).toMatchObject({
        name: 'web',
        image: 'nginx:1.27',
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
      });
      expect(pick(d, 'spec', 'template', 'spec', 'restartPolicy')).toBe('Always');

      const svc = await k.json('get', 'service', 'web', '-n', NS);
      expect(pick(svc, 'spec', 'type')).toBe('ClusterIP');
      expect(pick(svc, 'spec', 'sessionAffinity')).toBe('None');
      expect(pick(svc, 'spec', 'ports')).toEqual([
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' },
      ]);
    });

    it('get -o wide lists the workloads', async () => {
      const out = await k.ok('get', 'deploy,sts,ds', '-n', NS, '-o', 'wide');
      expect(nameColumn(out).sort()).toEqual([
        'daemonset.apps/log-agent',
        'deployment.apps/web',
        'statefulset.apps/db',
      ]);
    });

    it('get -l selects by label, equality- and set-based', async () => {
      const kinds = 'deploy,sts,ds,svc,cm';
      const byApp = await k.ok('get', kinds, '-n', NS, '-l', 'app=shop', '-o', 'name');
      expect(lines(byApp).sort()).toEqual([
        'configmap/shop-config',
        'deployment.apps/web',
        'service/web',
        'statefulset.apps/db',
      ]);
      expect(lines(await k.ok('get', kinds, '-n', NS, '-l', 'tier in (db)', '-o', 'name'))).toEqual([
        'statefulset.apps/db',
      ]);
      expect(lines(await k.ok('get', 'deploy,sts', '-n', NS, '-l', 'tier!=web', '-o', 'name'))).toEqual([
        'statefulset.apps/db',
      ]);
      expect(nameColumn(await k.ok('get', 'cm', '-n', NS, '-l', 'app=shop'))).toEqual(['shop-config']);
      const none = await k.run('get', 'cm', '-n', NS, '-l', 'app=nothing');
      expect(none.code).toBe(0);
      expect(none.stdout).toBe('');
      expect(none.stderr).toContain(`No resources found in ${NS} namespace.`);
    });

    it('get po,deploy,svc resolves short names across kinds', async () => {
      const out = await k.ok('get', 'po,deploy,svc', '-n', NS);
      expect(nameColumn(out).sort()).toEqual(['deployment.apps/web', 'service/web']);
    });

    it('get all shows the kinds of the "all" category', async () => {
      const out = await k.ok('get', 'all', '-n', NS);
      expect(nameColumn(out).sort()).toEqual([
        'cronjob.batch/nightly-report',
        'daemonset.apps/log-agent',
        'deployment.apps/web',
        'service/web',
        'statefulset.apps/db',
      ]);
    });

    it('describe deployment', async () => {
      const out = await k.ok('describe', 'deployment', 'web', '-n', NS);
      expect(out).toMatch(/^Name:\s+web$/m);
      expect(out).toMatch(/^Namespace:\s+shop$/m);
      expect(out).toMatch(/^Selector:\s+app=shop,tier=web$/m);
      expect(out).toMatch(/^Replicas:\s+2 desired \|/m);
      expect(out).toMatch(/^StrategyType:\s+RollingUpdate$/m);
      expect(out).toMatch(/^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$/m);
      expect(out).toMatch(/^\s+Image:\s+nginx:1\.27$/m);
      expect(out).toMatch(/^\s+Service Account:\s+shop-sa$/m);
    });

    it('label adds and removes a label', async () => {
      expect(lines(await k.ok('label', 'deployment', 'web', '-n', NS, 'env=prod'))).toEqual([
        'deployment.apps/web labeled',
      ]);
      expect(pick(await k.json('get', 'deployment', 'web', '-n', NS), 'metadata', 'labels')).toEqual({
        app: 'shop',
        tier: 'web',
        env: 'prod',
      });
      expect(lines(await k.ok('get', 'deploy', '-n', NS, '-l', 'env=prod', '-o', 'name'))).toEqual([
        'deployment.apps/web',
      ]);
      expect(lines(await k.ok('label', 'deployment', 'web', '-n', NS, 'env-'))).toEqual([
        'deployment.apps/web unlabeled',
      ]);
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(d, 'metadata', 'labels')).toEqual({ app: 'shop', tier: 'web' });
      // Metadata changes leave the generation alone.
      expect(pick(d, 'metadata', 'generation')).toBe(1);
    });

    it('annotate adds an annotation', async () => {
      // kubectl 1.27 prints the verb instead of the past tense (its own text, not the server's).
      const done = version === '1.27' ? 'annotate' : 'annotated';
      expect(lines(await k.ok('annotate', 'deployment', 'web', '-n', NS, 'note=hello'))).toEqual([
        `deployment.apps/web ${done}`,
      ]);
      const annotations = pick(await k.json('get', 'deployment', 'web', '-n', NS), 'metadata', 'annotations');
      expect(annotations).toMatchObject({ note: 'hello' });
      expect(annotations).toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
    });

    it('patch --type=json applies RFC 6902 operations, all or nothing', async () => {
      const patch = JSON.stringify([
        { op: 'test', path: '/spec/replicas', value: 2 },
        { op: 'replace', path: '/spec/revisionHistoryLimit', value: 5 },
      ]);
      expect(lines(await k.ok('patch', 'deployment', 'web', '-n', NS, '--type=json', '-p', patch))).toEqual([
        'deployment.apps/web patched',
      ]);
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(d, 'spec', 'revisionHistoryLimit')).toBe(5);
      expect(pick(d, 'metadata', 'generation')).toBe(2);

      const failing = JSON.stringify([
        { op: 'replace', path: '/spec/revisionHistoryLimit', value: 1 },
        { op: 'test', path: '/spec/replicas', value: 99 },
      ]);
      await k.fails('patch', 'deployment', 'web', '-n', NS, '--type=json', '-p', failing);
      const after = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(after, 'spec', 'revisionHistoryLimit')).toBe(5);
      expect(pick(after, 'metadata', 'resourceVersion')).toBe(pick(d, 'metadata', 'resourceVersion'));
    });

    it('patch --type=merge sets fields and removes them with null', async () => {
      const patch = '{"metadata":{"annotations":{"note":null}},"spec":{"minReadySeconds":7}}';
      expect(lines(await k.ok('patch', 'deployment', 'web', '-n', NS, '--type=merge', '-p', patch))).toEqual([
        'deployment.apps/web patched',
      ]);
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(d, 'spec', 'minReadySeconds')).toBe(7);
      expect(pick(d, 'metadata', 'annotations', 'note')).toBeUndefined();
    });

    it('patch --type=strategic merges containers by name; a no-op patch writes nothing', async () => {
      const patch = '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}';
      expect(
        lines(await k.ok('patch', 'deployment', 'web', '-n', NS, '--type=strategic', '-p', patch)),
      ).toEqual(['deployment.apps/web patched']);
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      const containers = pick(d, 'spec', 'template', 'spec', 'containers');
      // A merge patch would have replaced the list; the strategic one keeps the other fields.
      expect(containers).toMatchObject([
        {
          name: 'web',
          image: 'nginx:1.28',
          ports: [{ containerPort: 80 }],
          envFrom: [{ configMapRef: { name: 'shop-config' } }],
        },
      ]);
      expect(containers).toHaveLength(1);
      expect(lines(await k.ok('patch', 'deployment', 'web', '-n', NS, '-p', patch))).toEqual([
        'deployment.apps/web patched (no change)',
      ]);
      const again = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(again, 'metadata', 'resourceVersion')).toBe(pick(d, 'metadata', 'resourceVersion'));
    });

    it('invalid objects are refused with their field errors', async () => {
      const err = await k.fails('apply', '-f', INVALID_MANIFEST);
      expect(err).toContain('The Deployment "broken" is invalid');
      expect(err).toMatch(/spec\.replicas: Invalid value: -1/);
      expect(err).toMatch(/spec\.template\.metadata\.labels: Invalid value/);
      expect(await k.fails('get', 'deployment', 'broken', '-n', NS)).toContain(
        'deployments.apps "broken" not found',
      );
      const immutable = await k.fails(
        'patch',
        'deployment',
        'web',
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{"spec":{"selector":{"matchLabels":{"app":"other"}}}}',
      );
      expect(immutable).toContain('The Deployment "web" is invalid');
      expect(immutable).toMatch(/spec\.selector: Invalid value: .*field is immutable/);
    });

    it('scale deployment --replicas=3', async () => {
      expect(lines(await k.ok('scale', 'deployment', 'web', '-n', NS, '--replicas=3'))).toEqual([
        'deployment.apps/web scaled',
      ]);
      const d = await k.json('get', 'deployment', 'web', '-n', NS);
      expect(pick(d, 'spec', 'replicas')).toBe(3);
      expect(pick(d, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('nginx:1.28');
    });

    it('explain deployment.spec.strategy', async () => {
      const out = await k.ok('explain', 'deployment.spec.strategy');
      expect(out).toMatch(/^KIND:\s+Deployment$/m);
      expect(out).toMatch(/^VERSION:\s+(apps\/)?v1$/m);
      expect(out).toMatch(/^FIELD:\s+strategy <DeploymentStrategy>$/m);
      expect(out).toMatch(/^\s+rollingUpdate\s+<RollingUpdateDeployment>$/m);
      expect(out).toMatch(/^\s+type\s+<string>$/m);
    });

    it('delete removes one object and leaves the others', async () => {
      expect(lines(await k.ok('delete', 'configmap', 'shop-config', '-n', NS))).toEqual([
        'configmap "shop-config" deleted',
      ]);
      expect(await k.fails('get', 'configmap', 'shop-config', '-n', NS)).toContain(
        'Error from server (NotFound): configmaps "shop-config" not found',
      );
      expect(pick(await k.json('get', 'secret', 'shop-db', '-n', NS), 'metadata', 'name')).toBe('shop-db');
    });

    it('delete namespace returns once the namespace and its content are gone', async () => {
      expect(lines(await k.ok('delete', 'namespace', NS))).toEqual([`namespace "${NS}" deleted`]);
      // No waiting here: kubectl returned, so the namespace must already be gone.
      expect(await k.fails('get', 'namespace', NS)).toContain(
        `Error from server (NotFound): namespaces "${NS}" not found`,
      );
      const left = await k.run('get', APP_RESOURCES, '-n', NS, '-o', 'name');
      expect(left.code, left.stderr).toBe(0);
      expect(left.stdout).toBe('');
    });
  });
}
