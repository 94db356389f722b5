/**
 * What kube v1.33's pod strategy does to a new pod besides its status (src/defaults/pod-create.ts),
 * through kubectl 1.33 against a real server: pod (anti-)affinity terms' `matchLabelKeys` and
 * `mismatchLabelKeys` merged into their selectors from the pod's labels, AppArmor fields and
 * deprecated annotations synced with kube's warning, and the label-key validation. The expected
 * objects, warnings and errors are kube-apiserver v1.33.13's answers to the same pods.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlWarnings, runKubectl } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

type Json = Record<string, unknown>;
const APPARMOR = 'container.apparmor.security.beta.kubernetes.io/';
const deprecated = (container: string): string =>
  `metadata.annotations[${APPARMOR}${container}]: deprecated since v1.30; use the "appArmorProfile" field instead`;

async function getPod(name: string): Promise<Json> {
  const res = await runKubectl('1.33', ['get', 'pod', name, '-o', 'json'], server.kubeconfigPath);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Json;
}

const specOf = (pod: Json): Json => pod['spec'] as Json;
const annotationsOf = (pod: Json): unknown => (pod['metadata'] as Json)['annotations'];
const securityOf = (pod: Json): [string, unknown][] =>
  [
    ...((specOf(pod)['initContainers'] as Json[] | undefined) ?? []),
    ...(specOf(pod)['containers'] as Json[]),
  ].map((c) => [c['name'] as string, c['securityContext']]);

describe('a new pod, as kube’s pod strategy prepares it', () => {
  it('merges affinity label keys into the selectors', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a1', labels: { app: 'web', 'pod-template-hash': 'abc', tier: 'x' } },
      spec: {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { app: 'web' } },
                matchLabelKeys: ['pod-template-hash', 'missing'],
                mismatchLabelKeys: ['tier'],
                topologyKey: 'kubernetes.io/hostname',
              },
            ],
          },
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 10,
                podAffinityTerm: { labelSelector: {}, matchLabelKeys: ['app'], topologyKey: 'zone' },
              },
            ],
          },
        },
        containers: [{ name: 'c1', image: 'busybox' }],
      },
    };
    expect(await kubectlWarnings(server.kubeconfigPath, ['create'], pod)).toEqual([]);
    expect(specOf(await getPod('a1'))['affinity']).toEqual({
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: {
              matchLabels: { app: 'web' },
              matchExpressions: [
                { key: 'pod-template-hash', operator: 'In', values: ['abc'] },
                { key: 'tier', operator: 'NotIn', values: ['x'] },
              ],
            },
            matchLabelKeys: ['pod-template-hash', 'missing'],
            mismatchLabelKeys: ['tier'],
            topologyKey: 'kubernetes.io/hostname',
          },
        ],
      },
      podAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 10,
            podAffinityTerm: {
              labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
              matchLabelKeys: ['app'],
              topologyKey: 'zone',
            },
          },
        ],
      },
    });
  });

  it('refuses label keys kube refuses, with kube’s paths', async () => {
    const terms = [
      {
        labelSelector: { matchLabels: { app: 'web' } },
        matchLabelKeys: ['app', 'x', 'a b'],
        mismatchLabelKeys: ['x'],
        topologyKey: 'kubernetes.io/hostname',
      },
      { matchLabelKeys: ['app'], mismatchLabelKeys: ['x'], topologyKey: 'kubernetes.io/hostname' },
    ];
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bad', labels: { app: 'web', x: 'y' } },
      spec: {
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } },
        containers: [{ name: 'c1', image: 'busybox' }],
      },
    };
    const file = join(mkdtempSync(join(tmpdir(), 'pod-create-')), 'bad.json');
    writeFileSync(file, JSON.stringify(pod));
    const res = await runKubectl('1.33', ['create', '-f', file], server.kubeconfigPath);
    expect(res.code).not.toBe(0);
    const path = 'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution';
    expect(res.stderr.trim().split('\n').slice(1)).toEqual([
      `* ${path}[0].matchLabelKeys[2]: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      `* ${path}[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector`,
      `* ${path}[0][1]: Invalid value: "x": exists in both matchLabelKeys and labelSelector`,
      `* ${path}[0].matchLabelKeys[1]: Invalid value: "x": exists in both matchLabelKeys and mismatchLabelKeys`,
      `* ${path}[1].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set`,
      `* ${path}[1].mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set`,
    ]);
  });

  it('syncs AppArmor fields and annotations, warning of annotations that set a field', async () => {
    const a1 = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'aa1', annotations: { [`${APPARMOR}c2`]: 'localhost/foo' } },
      spec: {
        containers: [
          { name: 'c1', image: 'busybox', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } },
          { name: 'c2', image: 'busybox' },
        ],
      },
    };
    expect(await kubectlWarnings(server.kubeconfigPath, ['create'], a1)).toEqual([deprecated('c2')]);
    const pod1 = await getPod('aa1');
    expect(annotationsOf(pod1)).toEqual({
      [`${APPARMOR}c1`]: 'runtime/default',
      [`${APPARMOR}c2`]: 'localhost/foo',
    });
    expect(securityOf(pod1)).toEqual([
      ['c1', { appArmorProfile: { type: 'RuntimeDefault' } }],
      ['c2', { appArmorProfile: { type: 'Localhost', localhostProfile: 'foo' } }],
    ]);

    // The pod's profile: annotations for the containers without one; an annotation naming the
    // pod's profile sets no field and is not warned about.
    const a2 = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'aa2',
        annotations: { [`${APPARMOR}c2`]: 'unconfined', [`${APPARMOR}c3`]: 'runtime/default' },
      },
      spec: {
        securityContext: { appArmorProfile: { type: 'Unconfined' } },
        initContainers: [{ name: 'i1', image: 'busybox' }],
        containers: ['c1', 'c2', 'c3'].map((name) => ({ name, image: 'busybox' })),
      },
    };
    expect(await kubectlWarnings(server.kubeconfigPath, ['create'], a2)).toEqual([deprecated('c3')]);
    const pod2 = await getPod('aa2');
    expect(annotationsOf(pod2)).toEqual({
      [`${APPARMOR}c1`]: 'unconfined',
      [`${APPARMOR}c2`]: 'unconfined',
      [`${APPARMOR}c3`]: 'runtime/default',
      [`${APPARMOR}i1`]: 'unconfined',
    });
    expect(securityOf(pod2)).toEqual([
      ['i1', undefined],
      ['c1', undefined],
      ['c2', undefined],
      ['c3', { appArmorProfile: { type: 'RuntimeDefault' } }],
    ]);
  });
});
