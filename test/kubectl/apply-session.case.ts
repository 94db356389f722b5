/**
 * One kubectl version's field-ownership session (not run directly; suite.case.ts calls it per
 * version): server-side apply with and without `--force-conflicts`, client-side apply, `diff`,
 * `create --dry-run=server`, `edit` driven by an editor script, `set image`, `label --overwrite`.
 * Runs in its own namespace, removed first and last.
 */
import { mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { kubectlPath, type KubectlVersion, type TestServer } from '../support/server.js';
import { Kubectl, lines, pick } from './support/kubectl.js';

/** A Deployment manifest in namespace `ns` with one container of `image` and `replicas`. */
function deployment(ns: string, name: string, image: string, replicas = 2): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
    app: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: web
        image: ${image}
`;
}

interface Entry {
  manager?: string;
  operation?: string;
  subresource?: string;
}

function managers(obj: unknown): Entry[] {
  const mf = pick(obj, 'metadata', 'managedFields');
  return Array.isArray(mf) ? (mf as Entry[]) : [];
}

/** Registers the session of `version` against `server()`. */
export function applySession(version: KubectlVersion, server: () => TestServer): void {
  describe(`kubectl ${version}: field ownership`, () => {
    const k = new Kubectl(version, () => server().kubeconfigPath);
    const ns = `ssa-${version.replace('.', '-')}`;
    let dir = '';
    const file = (name: string): string => join(dir, name);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'capstan-ssa-'));
      if (kubectlPath(version) === undefined) return;
      await k.ok('delete', 'namespace', ns, '--ignore-not-found');
      // `kubectl create namespace` sends a protobuf body (another issue's work): apply sends JSON.
      await writeFile(file('ns.yaml'), `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`);
      await k.ok('apply', '-f', file('ns.yaml'));
    });
    afterAll(async () => {
      if (kubectlPath(version) !== undefined) await k.run('delete', 'namespace', ns, '--ignore-not-found');
      await rm(dir, { recursive: true, force: true });
    });

    it('apply --server-side creates, records an Apply entry, and re-applies unchanged', async () => {
      await writeFile(file('web.yaml'), deployment(ns, 'web', 'nginx:1.27'));
      expect(lines(await k.ok('apply', '--server-side', '-f', file('web.yaml')))).toEqual([
        'deployment.apps/web serverside-applied',
      ]);
      const d = await k.json('get', 'deployment', 'web', '-n', ns, '--show-managed-fields');
      expect(managers(d)).toContainEqual(expect.objectContaining({ manager: 'kubectl', operation: 'Apply' }));
      const rv = pick(d, 'metadata', 'resourceVersion');
      await k.ok('apply', '--server-side', '-f', file('web.yaml'));
      expect(pick(await k.json('get', 'deployment', 'web', '-n', ns), 'metadata', 'resourceVersion')).toBe(
        rv,
      );
      // A server-side dry run of a change answers it and writes nothing.
      await writeFile(file('web-dry.yaml'), deployment(ns, 'web', 'nginx:1.27', 5));
      expect(
        lines(await k.ok('apply', '--server-side', '--dry-run=server', '-f', file('web-dry.yaml'))),
      ).toEqual(['deployment.apps/web serverside-applied (server dry run)']);
      const after = await k.json('get', 'deployment', 'web', '-n', ns);
      expect(pick(after, 'metadata', 'resourceVersion')).toBe(rv);
      expect(pick(after, 'spec', 'replicas')).toBe(2);
    });

    it('a second manager conflicts; --force-conflicts takes the field', async () => {
      await writeFile(file('web-other.yaml'), deployment(ns, 'web', 'nginx:1.28'));
      const err = await k.fails(
        'apply',
        '--server-side',
        '--field-manager=other',
        '-f',
        file('web-other.yaml'),
      );
      expect(err).toContain('conflict with "kubectl"');
      expect(err).toContain('.spec.template.spec.containers[name="web"].image');
      await k.ok(
        'apply',
        '--server-side',
        '--field-manager=other',
        '--force-conflicts',
        '-f',
        file('web-other.yaml'),
      );
      const d = await k.json('get', 'deployment', 'web', '-n', ns, '--show-managed-fields');
      expect(pick(d, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('nginx:1.28');
      expect(managers(d)).toContainEqual(expect.objectContaining({ manager: 'other', operation: 'Apply' }));
    });

    it('create --dry-run=server -o yaml answers the defaulted object and stores nothing', async () => {
      await writeFile(
        file('cm.yaml'),
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\n  namespace: ${ns}\ndata:\n  a: b\n`,
      );
      const out = await k.ok('create', '-f', file('cm.yaml'), '--dry-run=server', '-o', 'yaml');
      const cm: unknown = parseYaml(out);
      expect(pick(cm, 'data')).toEqual({ a: 'b' });
      expect(pick(cm, 'metadata', 'uid')).toMatch(/^[0-9a-f-]{36}$/);
      expect(pick(cm, 'metadata', 'resourceVersion')).toBeUndefined();
      expect(await k.fails('get', 'configmap', 'dry', '-n', ns)).toContain('configmaps "dry" not found');
    });

    it('create configmap --from-literal --dry-run=server (a protobuf body on newer kubectl) stores nothing', async () => {
      const out = await k.ok(
        'create',
        'configmap',
        'lit',
        '-n',
        ns,
        '--from-literal=a=b',
        '--dry-run=server',
        '-o',
        'yaml',
      );
      const cm: unknown = parseYaml(out);
      expect(pick(cm, 'data')).toEqual({ a: 'b' });
      expect(pick(cm, 'metadata', 'uid')).toMatch(/^[0-9a-f-]{36}$/);
      expect(await k.fails('get', 'configmap', 'lit', '-n', ns)).toContain('configmaps "lit" not found');
    });

    it('client-side apply, then diff shows a pending change without writing it', async () => {
      await writeFile(file('csa.yaml'), deployment(ns, 'csa', 'nginx:1.27'));
      expect(lines(await k.ok('apply', '-f', file('csa.yaml')))).toEqual(['deployment.apps/csa created']);
      const d = await k.json('get', 'deployment', 'csa', '-n', ns);
      expect(
        pick(d, 'metadata', 'annotations', 'kubectl.kubernetes.io/last-applied-configuration'),
      ).toBeDefined();
      const rv = pick(d, 'metadata', 'resourceVersion');
      const same = await k.run('diff', '-f', file('csa.yaml'));
      expect(same.code, same.stderr).toBe(0);
      await writeFile(file('csa.yaml'), deployment(ns, 'csa', 'nginx:1.29', 3));
      const changed = await k.run('diff', '-f', file('csa.yaml'));
      expect(changed.code, changed.stderr).toBe(1);
      expect(changed.stdout).toMatch(/^-\s+replicas: 2$/m);
      expect(changed.stdout).toMatch(/^\+\s+replicas: 3$/m);
      expect(changed.stdout).toMatch(/^\+\s+- image: nginx:1.29$/m);
      expect(pick(await k.json('get', 'deployment', 'csa', '-n', ns), 'metadata', 'resourceVersion')).toBe(
        rv,
      );
      expect(lines(await k.ok('apply', '-f', file('csa.yaml')))).toEqual(['deployment.apps/csa configured']);
      expect(pick(await k.json('get', 'deployment', 'csa', '-n', ns), 'spec', 'replicas')).toBe(3);
    });

    it('client-side apply, then apply --server-side: what the annotation recorded is taken without a conflict, and the annotation follows', async () => {
      await writeFile(file('mig.yaml'), deployment(ns, 'mig', 'nginx:1.27'));
      await k.ok('apply', '-f', file('mig.yaml'));
      await writeFile(file('mig.yaml'), deployment(ns, 'mig', 'nginx:1.29', 3));
      expect(lines(await k.ok('apply', '--server-side', '-f', file('mig.yaml')))).toEqual([
        'deployment.apps/mig serverside-applied',
      ]);
      const d = await k.json('get', 'deployment', 'mig', '-n', ns, '--show-managed-fields');
      expect(pick(d, 'spec', 'replicas')).toBe(3);
      const annotation = pick(
        d,
        'metadata',
        'annotations',
        'kubectl.kubernetes.io/last-applied-configuration',
      );
      expect(typeof annotation).toBe('string');
      const recorded = JSON.parse(annotation as string) as unknown;
      expect(pick(recorded, 'spec', 'replicas')).toBe(3);
      expect(pick(recorded, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('nginx:1.29');
      expect(managers(d)).toEqual(
        expect.arrayContaining([expect.objectContaining({ manager: 'kubectl', operation: 'Apply' })]),
      );
      // A field someone else changed since the client-side apply stays a conflict.
      await k.ok('patch', 'deployment', 'mig', '-n', ns, '-p', '{"spec":{"replicas":5}}');
      await writeFile(file('mig.yaml'), deployment(ns, 'mig', 'nginx:1.29', 4));
      expect(await k.fails('apply', '--server-side', '-f', file('mig.yaml'))).toContain(
        'conflict with "kubectl-patch"',
      );
    });

    it('set image and label --overwrite record their changes', async () => {
      expect(lines(await k.ok('set', 'image', 'deployment/csa', '-n', ns, 'web=nginx:1.30'))).toEqual([
        'deployment.apps/csa image updated',
      ]);
      await k.ok('label', 'deployment', 'csa', '-n', ns, 'tier=a');
      expect(await k.fails('label', 'deployment', 'csa', '-n', ns, 'tier=b')).toContain(
        "'tier' already has a value (a)",
      );
      expect(lines(await k.ok('label', 'deployment', 'csa', '-n', ns, 'tier=b', '--overwrite'))).toEqual([
        'deployment.apps/csa labeled',
      ]);
      const d = await k.json('get', 'deployment', 'csa', '-n', ns, '--show-managed-fields');
      expect(pick(d, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('nginx:1.30');
      expect(pick(d, 'metadata', 'labels', 'tier')).toBe('b');
      expect(managers(d).map((e) => e.manager)).toEqual(
        expect.arrayContaining(['kubectl-client-side-apply', 'kubectl-set', 'kubectl-label']),
      );
    });

    it('edit applies what the editor wrote', async () => {
      const editor = file('editor.sh');
      await writeFile(editor, '#!/bin/sh\nsed -i "s/image: nginx:1.30/image: nginx:1.31/" "$1"\n');
      await chmod(editor, 0o755);
      const saved = process.env['KUBE_EDITOR'];
      process.env['KUBE_EDITOR'] = editor;
      try {
        expect(lines(await k.ok('edit', 'deployment', 'csa', '-n', ns))).toEqual([
          'deployment.apps/csa edited',
        ]);
      } finally {
        if (saved === undefined) delete process.env['KUBE_EDITOR'];
        else process.env['KUBE_EDITOR'] = saved;
      }
      const d = await k.json('get', 'deployment', 'csa', '-n', ns, '--show-managed-fields');
      expect(pick(d, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('nginx:1.31');
      expect(managers(d).map((e) => e.manager)).toContain('kubectl-edit');
    });
  });
}
