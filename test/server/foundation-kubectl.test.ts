/**
 * Stock kubectl against `capstan server`: `version`, `api-resources` (every served kind with its
 * short names, API version and scope) and a first round trip, on the oldest and newest kubectl
 * the machine has (1.27 reads aggregated discovery v2beta1, 1.33 reads v2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/registry.js';
import {
  kubectlPath,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';
import { METRICS_API_ROWS } from '../kubectl/support/api-resources.js';

const VERSIONS: readonly KubectlVersion[] = ['1.27', '1.33'];
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface Row {
  readonly name: string;
  readonly shortNames: string;
  readonly apiVersion: string;
  readonly namespaced: string;
  readonly kind: string;
}

/** Parses `kubectl api-resources` output by its header's column offsets. */
function parseApiResources(text: string): Row[] {
  const [header = '', ...lines] = text.split('\n').filter((l) => l.trim() !== '');
  const columns = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'].map((c) => header.indexOf(c));
  expect(columns.every((c) => c >= 0)).toBe(true);
  return lines.map((line) => {
    const cell = (i: number): string => line.slice(columns[i], columns[i + 1] ?? line.length).trim();
    return { name: cell(0), shortNames: cell(1), apiVersion: cell(2), namespaced: cell(3), kind: cell(4) };
  });
}

describe.each(VERSIONS)('kubectl %s', (version) => {
  const installed = kubectlPath(version) !== undefined;

  it.skipIf(!installed)('reports the server version', async () => {
    const result = await runKubectl(version, ['version', '-o', 'json'], server.kubeconfigPath);
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout) as {
      serverVersion: { major: string; minor: string; gitVersion: string };
    };
    expect(parsed.serverVersion).toMatchObject({ major: '1', minor: '33', gitVersion: 'v1.33.0+capstan' });
  });

  it.skipIf(!installed)('lists every served kind with its short names, version and scope', async () => {
    const result = await runKubectl(version, ['api-resources'], server.kubeconfigPath);
    expect(result.code, result.stderr).toBe(0);
    const rows = parseApiResources(result.stdout);
    const registry = loadRegistry();
    // kubectl shows each resource once, at its group's preferred version.
    const expected = registry.all().filter((t) => registry.group(t.group)?.preferredVersion === t.version);
    // Plus metrics.k8s.io, served by src/metrics-api outside the registry.
    expect(rows).toHaveLength(expected.length + METRICS_API_ROWS.length);
    for (const row of METRICS_API_ROWS) expect(rows).toContainEqual(row);
    for (const t of expected) {
      const row = rows.find((r) => r.name === t.plural && r.apiVersion === t.apiVersion);
      expect(row, `${t.plural} ${t.apiVersion}`).toEqual({
        name: t.plural,
        shortNames: t.shortNames.join(','),
        apiVersion: t.apiVersion,
        namespaced: String(t.namespaced),
        kind: t.kind,
      });
    }
    // Spot checks against kube-apiserver's own table, independent of kinds.yaml.
    expect(rows).toContainEqual({
      name: 'deployments',
      shortNames: 'deploy',
      apiVersion: 'apps/v1',
      namespaced: 'true',
      kind: 'Deployment',
    });
    expect(rows).toContainEqual({
      name: 'customresourcedefinitions',
      shortNames: 'crd,crds',
      apiVersion: 'apiextensions.k8s.io/v1',
      namespaced: 'false',
      kind: 'CustomResourceDefinition',
    });
    expect(rows).toContainEqual({
      name: 'horizontalpodautoscalers',
      shortNames: 'hpa',
      apiVersion: 'autoscaling/v2',
      namespaced: 'true',
      kind: 'HorizontalPodAutoscaler',
    });
    expect(rows).toContainEqual({
      name: 'nodes',
      shortNames: 'no',
      apiVersion: 'v1',
      namespaced: 'false',
      kind: 'Node',
    });
  });

  it.skipIf(!installed)('resolves short names and categories', async () => {
    const byShortName = await runKubectl(
      version,
      ['get', 'ns', 'default', '-o', 'name'],
      server.kubeconfigPath,
    );
    expect(byShortName.code, byShortName.stderr).toBe(0);
    expect(byShortName.stdout.trim()).toBe('namespace/default');
    const all = await runKubectl(
      version,
      ['api-resources', '--categories=all', '-o', 'name'],
      server.kubeconfigPath,
    );
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.trim().split('\n').sort()).toEqual(
      [
        'cronjobs.batch',
        'daemonsets.apps',
        'deployments.apps',
        'horizontalpodautoscalers.autoscaling',
        'jobs.batch',
        'pods',
        'replicasets.apps',
        'replicationcontrollers',
        'services',
        'statefulsets.apps',
      ].sort(),
    );
  });
});
