/**
 * The plugin registry and kube's smaller built-in plugins on one server (default plugins plus
 * NodeRestriction and AlwaysPullImages): kube's order and start-up errors for the flags;
 * Priority (system classes, resolution, globalDefault, refusals), DefaultTolerationSeconds,
 * TaintNodesByCondition, StorageObjectInUseProtection, DefaultStorageClass,
 * DefaultIngressClass, LimitRanger (defaults, annotation, max), RuntimeClass,
 * CertificateSubjectRestriction and NodeRestriction, each with kube's messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enabledPluginNames, pluginFlagErrors } from '../../src/admission/plugins.js';
import { generateKeyPair } from '../../src/pki/certificate.js';
import { createCsr } from '../../src/pki/csr.js';
import { FlagError } from '../../src/flags/flags.js';
import { parseServerArgs } from '../../src/server/options.js';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer } from '../support/users.js';

let server: TestServer;
let admin: AdminTls;
let node: AdminTls;

interface Reply {
  status: number;
  json: Record<string, unknown> & { spec?: Record<string, unknown>; metadata?: Record<string, unknown> };
}

async function call(method: string, path: string, body?: unknown, tls: AdminTls = admin): Promise<Reply> {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: JSON.parse(res.body) as Reply['json'] };
}

const pod = (name: string, spec: Record<string, unknown> = {}): unknown => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

beforeAll(async () => {
  server = await startTestServer({ args: ['--enable-admission-plugins=NodeRestriction,AlwaysPullImages'] });
  admin = adminTls(server.kubeconfigPath);
  node = await clientTls(server, await clusterIssuer(server), 'system:node:n1', ['system:nodes']);
  expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'p' } })).status).toBe(201);
}, 60_000);
afterAll(async () => server?.close());

describe('the plugin flags', () => {
  it('runs plugins in kube’s order whatever the flag order, and refuses unknown names at start', () => {
    const names = enabledPluginNames(['AlwaysDeny', 'NodeRestriction'], ['ResourceQuota']);
    expect(names.indexOf('NodeRestriction')).toBe(names.indexOf('ServiceAccount') + 1);
    expect(names.at(-1)).toBe('AlwaysDeny');
    expect(names).not.toContain('ResourceQuota');
    expect(pluginFlagErrors(['Nope'], ['Priority', 'Never'])).toEqual([
      'enable-admission-plugins plugin "Nope" is unknown',
      'disable-admission-plugins plugin "Never" is unknown',
    ]);
    expect(() => parseServerArgs(['--enable-admission-plugins=Nope'])).toThrow(FlagError);
    expect(() =>
      parseServerArgs(['--enable-admission-plugins=Priority', '--disable-admission-plugins=Priority']),
    ).toThrow('[Priority] in enable-admission-plugins and disable-admission-plugins overlapped');
  });
});

describe('pod plugins', () => {
  it('creates the system priority classes and resolves a pod’s priority', async () => {
    const critical = await call('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical');
    expect(critical.status).toBe(200);
    expect(critical.json['value']).toBe(2000001000);
    const plain = await call('POST', '/api/v1/namespaces/p/pods', pod('plain'));
    expect(plain.status).toBe(201);
    expect(plain.json.spec?.['priority']).toBe(0);
    expect(plain.json.spec?.['preemptionPolicy']).toBe('PreemptLowerPriority');
    // DefaultTolerationSeconds and AlwaysPullImages on the same pod.
    expect(plain.json.spec?.['tolerations']).toEqual([
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
    expect((plain.json.spec?.['containers'] as { imagePullPolicy: string }[])[0]?.imagePullPolicy).toBe(
      'Always',
    );
    const critPod = await call(
      'POST',
      '/api/v1/namespaces/p/pods',
      pod('crit', { priorityClassName: 'system-cluster-critical' }),
    );
    expect(critPod.json.spec?.['priority']).toBe(2000000000);
    const unknown = await call('POST', '/api/v1/namespaces/p/pods', pod('u', { priorityClassName: 'nope' }));
    expect(unknown.status).toBe(403);
    expect(unknown.json['message']).toBe('pods "u" is forbidden: no PriorityClass with name nope was found');
    const stated = await call('POST', '/api/v1/namespaces/p/pods', pod('s', { priority: 7 }));
    expect(stated.json['message']).toBe(
      'pods "s" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );
  });

  it('applies a globalDefault class and allows only one', async () => {
    const pc = (name: string): unknown => ({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value: 1000,
      globalDefault: true,
    });
    expect((await call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', pc('default-pc'))).status).toBe(
      201,
    );
    const second = await call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', pc('another'));
    expect(second.status).toBe(403);
    expect(second.json['message']).toBe(
      'priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass default-pc is already marked as default. Only one default can exist',
    );
    const p = await call('POST', '/api/v1/namespaces/p/pods', pod('defaulted'));
    expect(p.json.spec?.['priorityClassName']).toBe('default-pc');
    expect(p.json.spec?.['priority']).toBe(1000);
    expect((await call('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/default-pc')).status).toBe(200);
  });

  it('LimitRanger defaults requests and limits, annotates, and refuses over max', async () => {
    const lr = {
      metadata: { name: 'lr' },
      spec: {
        limits: [
          { type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, max: { cpu: '1' } },
        ],
      },
    };
    expect((await call('POST', '/api/v1/namespaces/p/limitranges', lr)).status).toBe(201);
    const p = await call('POST', '/api/v1/namespaces/p/pods', pod('limited'));
    expect(p.status).toBe(201);
    const c = (p.json.spec?.['containers'] as { resources: unknown }[])[0];
    expect(c?.resources).toEqual({ limits: { cpu: '500m' }, requests: { cpu: '100m' } });
    expect((p.json.metadata?.['annotations'] as Record<string, string>)['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu request for container c; cpu limit for container c',
    );
    const big = await call(
      'POST',
      '/api/v1/namespaces/p/pods',
      pod('big', { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '2' } } }] }),
    );
    expect(big.status).toBe(403);
    expect(big.json['message']).toBe(
      'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    );
    expect((await call('DELETE', '/api/v1/namespaces/p/limitranges/lr')).status).toBe(200);
  });

  it('RuntimeClass refuses an unknown class and sets the overhead', async () => {
    const missing = await call(
      'POST',
      '/api/v1/namespaces/p/pods',
      pod('rc0', { runtimeClassName: 'gvisor' }),
    );
    expect(missing.status).toBe(403);
    expect(missing.json['message']).toBe(
      'pods "rc0" is forbidden: pod rejected: RuntimeClass "gvisor" not found',
    );
    const rc = { metadata: { name: 'gvisor' }, handler: 'runsc', overhead: { podFixed: { cpu: '250m' } } };
    expect((await call('POST', '/apis/node.k8s.io/v1/runtimeclasses', rc)).status).toBe(201);
    const ok = await call('POST', '/api/v1/namespaces/p/pods', pod('rc1', { runtimeClassName: 'gvisor' }));
    expect(ok.status).toBe(201);
    expect(ok.json.spec?.['overhead']).toEqual({ cpu: '250m' });
  });
});

describe('other kinds', () => {
  it('taints a new node not-ready', async () => {
    const n = await call('POST', '/api/v1/nodes', { metadata: { name: 'n1' } });
    expect(n.status).toBe(201);
    expect(n.json.spec?.['taints']).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });

  it('protects claims and volumes with finalizers and gives claims the default class', async () => {
    const sc = {
      metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/fast',
    };
    expect((await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc)).status).toBe(201);
    const pvc = await call('POST', '/api/v1/namespaces/p/persistentvolumeclaims', {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    expect(pvc.status).toBe(201);
    expect(pvc.json.metadata?.['finalizers']).toEqual(['kubernetes.io/pvc-protection']);
    expect(pvc.json.spec?.['storageClassName']).toBe('fast');
    const pv = await call('POST', '/api/v1/persistentvolumes', {
      metadata: { name: 'vol' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
    });
    expect(pv.status).toBe(201);
    expect(pv.json.metadata?.['finalizers']).toEqual(['kubernetes.io/pv-protection']);
  });

  it('gives an Ingress the default IngressClass', async () => {
    const ic = {
      metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
      spec: { controller: 'k8s.io/ingress-nginx' },
    };
    expect((await call('POST', '/apis/networking.k8s.io/v1/ingressclasses', ic)).status).toBe(201);
    const ing = await call('POST', '/apis/networking.k8s.io/v1/namespaces/p/ingresses', {
      metadata: { name: 'web' },
      spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
    });
    expect(ing.status).toBe(201);
    expect(ing.json.spec?.['ingressClassName']).toBe('nginx');
  });

  it('refuses a kube-apiserver-client CSR for system:masters', async () => {
    const keys = await generateKeyPair();
    const pem = createCsr(
      { commonName: 'eve', organizations: ['system:masters'] },
      keys.publicKey,
      keys.privateKey,
    );
    const r = await call('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      metadata: { name: 'eve' },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: 'kubernetes.io/kube-apiserver-client',
        usages: ['client auth'],
      },
    });
    expect(r.status).toBe(403);
    expect(r.json['message']).toBe(
      'certificatesigningrequests.certificates.k8s.io "eve" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
  });

  it('NodeRestriction keeps a node to its own Node and mirror pods', async () => {
    const other = await call('POST', '/api/v1/nodes', { metadata: { name: 'n2' } }, node);
    expect(other.status).toBe(403);
    expect(other.json['message']).toBe(
      'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
    );
    const p = await call('POST', '/api/v1/namespaces/p/pods', pod('np'), node);
    expect(p.status).toBe(403);
    expect(p.json['message']).toBe(
      'pods "np" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
  });
});
