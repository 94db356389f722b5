/**
 * PodSecurity end to end with stock kubectl 1.33: enforce refuses with kube's exact message,
 * warn shows kube's warning text, pod controllers get warnings only, raising a namespace's
 * enforce level warns about the existing pods, bad labels are a 422, and the
 * AdmissionConfiguration's defaults and exemptions (read from a `path` relative to the file)
 * apply. The audit annotations are checked on the plugin itself.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podSecurity } from '../../src/admission/pod-security/plugin.js';
import type { AdmissionAttributes } from '../../src/admission/index.js';
import type { AdmissionObjects } from '../../src/admission/objects.js';
import type { KubeObject } from '../../src/api/object.js';
import { SERVER_USER } from '../../src/api/user.js';
import { adminFetch, adminTls, runKubectl, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let dir: string;

const RESTRICTED_MESSAGE = (c: string): string =>
  `allowPrivilegeEscalation != false (container "${c}" must set securityContext.allowPrivilegeEscalation=false), ` +
  `unrestricted capabilities (container "${c}" must set securityContext.capabilities.drop=["ALL"]), ` +
  `runAsNonRoot != true (pod or container "${c}" must set securityContext.runAsNonRoot=true), ` +
  `seccompProfile (pod or container "${c}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;

async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runKubectl('1.33', args, server.kubeconfigPath);
}

async function manifest(name: string, body: object): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify(body));
  return path;
}

function pod(name: string, ns: string, container: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { containers: [{ name, image: 'nginx', ...container }] },
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-psa-'));
  await writeFile(
    join(dir, 'podsecurity.yaml'),
    [
      'apiVersion: pod-security.admission.config.k8s.io/v1',
      'kind: PodSecurityConfiguration',
      'defaults:',
      '  enforce: privileged',
      '  warn: baseline',
      'exemptions:',
      '  namespaces: [exempt]',
      '  usernames: []',
      '  runtimeClasses: []',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'admission.yaml'),
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  path: podsecurity.yaml',
    ].join('\n'),
  );
  server = await startTestServer({
    args: [`--admission-control-config-file=${join(dir, 'admission.yaml')}`],
  });
  for (const ns of ['strict', 'warned', 'relabel', 'exempt']) {
    expect((await kubectl('create', 'namespace', ns)).code).toBe(0);
  }
  expect(
    (await kubectl('label', 'namespace', 'strict', 'pod-security.kubernetes.io/enforce=restricted')).code,
  ).toBe(0);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('PodSecurity with kubectl 1.33', () => {
  it('refuses a pod the enforce level forbids, with kube’s message', async () => {
    const r = await kubectl('apply', '-f', await manifest('p1', pod('p1', 'strict')));
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "${join(dir, 'p1.json')}": pods "p1" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_MESSAGE('p1')}`,
    );
  });

  it('admits a pod that meets restricted', async () => {
    const ok = pod('ok', 'strict', {
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      },
    });
    const r = await kubectl('apply', '-f', await manifest('ok', ok));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('warns (configured default warn=baseline) and admits', async () => {
    const r = await kubectl(
      'apply',
      '-f',
      await manifest('priv', pod('priv', 'warned', { securityContext: { privileged: true } })),
    );
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(
      'Warning: would violate PodSecurity "baseline:latest": privileged (container "priv" must not set securityContext.privileged=true)',
    );
  });

  it('gives a Deployment in an enforcing namespace warnings only', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'strict' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx' }] },
        },
      },
    };
    const r = await kubectl('apply', '-f', await manifest('web', deploy));
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_MESSAGE('web')}`,
    );
  });

  it('warns about existing pods when the enforce level is raised', async () => {
    for (const n of ['a', 'b', 'c']) {
      const r = await kubectl(
        'apply',
        '-f',
        await manifest(`r-${n}`, pod(n, 'relabel', { securityContext: { privileged: true } })),
      );
      expect(r.code).toBe(0);
    }
    const r = await kubectl('label', 'namespace', 'relabel', 'pod-security.kubernetes.io/enforce=baseline');
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual([
      'Warning: existing pods in namespace "relabel" violate the new PodSecurity enforce level "baseline:latest"',
      'Warning: a (and 2 other pods): privileged',
    ]);
  });

  it('refuses an invalid policy label with a 422', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const res = await adminFetch(`${server.url}/api/v1/namespaces`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'bad', labels: { 'pod-security.kubernetes.io/enforce': 'strictest' } },
      }),
    });
    expect(res.status).toBe(422);
    expect((JSON.parse(res.body) as { message: string }).message).toBe(
      'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strictest": must be one of privileged, baseline, restricted',
    );
  });

  it('exempts the configured namespace, and says so when it is labelled', async () => {
    const r = await kubectl('label', 'namespace', 'exempt', 'pod-security.kubernetes.io/enforce=restricted');
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(
      'Warning: namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored',
    );
    const p = await kubectl(
      'apply',
      '-f',
      await manifest('ex', pod('ex', 'exempt', { securityContext: { privileged: true } })),
    );
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('');
  });
});

describe('PodSecurity audit annotations', () => {
  const namespaces: Record<string, KubeObject> = {
    audited: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'audited',
        labels: {
          'pod-security.kubernetes.io/enforce': 'baseline',
          'pod-security.kubernetes.io/audit': 'restricted',
        },
      },
    },
  };
  const objects = {
    get: async (_k: unknown, _ns: unknown, name: string) => namespaces[name],
  } as unknown as AdmissionObjects;

  it('records enforce-policy and audit-violations', async () => {
    const annotations: Record<string, string> = {};
    const warnings: string[] = [];
    const attrs: AdmissionAttributes = {
      operation: 'CREATE',
      type: { group: '', version: 'v1', kind: 'Pod', plural: 'pods' } as AdmissionAttributes['type'],
      subresource: undefined,
      namespace: 'audited',
      name: 'x',
      object: pod('x', 'audited') as KubeObject,
      oldObject: undefined,
      options: {},
      dryRun: false,
      user: SERVER_USER,
      warn: (m) => warnings.push(m),
      annotate: (k, v) => {
        annotations[k] = v;
      },
    };
    await podSecurity(objects, undefined).validate?.(attrs);
    expect(annotations).toEqual({
      'pod-security.kubernetes.io/enforce-policy': 'baseline:latest',
      'pod-security.kubernetes.io/audit-violations': `would violate PodSecurity "restricted:latest": ${RESTRICTED_MESSAGE('x')}`,
    });
    expect(warnings).toEqual([]);
  });
});
