/**
 * ControllerRevision data (src/controllers/history/revisions.ts) as kube's `getPatch` writes it:
 * clients compare these bytes with the ones they make from the owner (kube's e2e `daemon.Match`,
 * kubectl's DaemonSet rollback), so they must be Go's `json.Marshal` of the template as a map:
 * sorted keys, HTML-safe strings, and the typed template's zero `creationTimestamp` as `null`.
 */
import { describe, expect, it } from 'vitest';
import type { ControllerRevision } from '../../src/api/types/apps-v1.js';
import type { PodTemplateSpec } from '../../src/api/types/core-v1.js';
import { canonicalJson, equalRevisions, templatePatch } from '../../src/controllers/history/revisions.js';

const template: PodTemplateSpec = {
  metadata: { labels: { 'daemonset-name': 'ds', app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'true && echo <ok>'] }] },
};

const revision = (name: string, data: unknown, n: number): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: { name, namespace: 'default' },
  data,
  revision: n,
});

describe('revision data', () => {
  it('is the bytes kube’s getPatch gives for the template', () => {
    expect(canonicalJson(templatePatch(template))).toBe(
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"a","daemonset-name":"ds"}},' +
        '"spec":{"containers":[{"command":["sh","-c","true \\u0026\\u0026 echo \\u003cok\\u003e"],"image":"busybox","name":"c"}]}}}}',
    );
  });

  it('is sent in that key order, which the server keeps (a RawExtension is stored as sent)', () => {
    const plain: PodTemplateSpec = { ...template, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    expect(JSON.stringify(templatePatch(plain))).toBe(canonicalJson(templatePatch(plain)));
  });

  it('finds a revision written without the null creationTimestamp equal, so no pod is replaced', () => {
    const wanted = revision('ds-new', templatePatch(template), 3);
    const older = { spec: { template: { ...template, $patch: 'replace' } } };
    const other = templatePatch({ ...template, metadata: { labels: { app: 'b' } } });
    const found = equalRevisions([revision('ds-old', older, 1), revision('ds-other', other, 2)], wanted);
    expect(found.map((r) => r.metadata.name)).toEqual(['ds-old']);
  });
});
