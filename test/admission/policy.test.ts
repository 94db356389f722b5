/**
 * ValidatingAdmissionPolicy end to end on one server: policies and bindings applied with kubectl
 * 1.33, targets ConfigMaps. Each binding is scoped to its own namespace (matchResources
 * namespaceSelector), so the tests never meet; params are ConfigMaps in `vap-params`, a namespace
 * no binding selects. Proves: params by name with messageExpression (kube's denial text, 422
 * Invalid by default, `reason` sets the code), Warn (a Warning header kubectl prints), paramRef
 * selector with parameterNotFoundAction Deny, matchConditions, variables, and an expression
 * that errs when run (failurePolicy Fail refuses, Ignore admits; status.typeChecking written).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminJson,
  adminTls,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';

type Json = Record<string, unknown>;

let server: TestServer;
let tls: AdminTls;

async function api(method: string, path: string, body?: unknown) {
  return adminJson(`${server.url}${path}`, tls, method, body);
}

function createConfigMap(
  ns: string,
  name: string,
  data: Record<string, string>,
  labels: Json = {},
  query = '',
) {
  return api('POST', `/api/v1/namespaces/${ns}/configmaps${query}`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, labels },
    data,
  });
}

async function kubectl(args: string[]) {
  return runKubectl('1.33', args, server.kubeconfigPath);
}

/** Applies YAML with kubectl 1.33. */
async function apply(name: string, yaml: string): Promise<void> {
  const file = join(server.dataDir, `${name}.yaml`);
  await writeFile(file, yaml);
  const r = await kubectl(['apply', '-f', file]);
  expect(r.code, r.stderr).toBe(0);
}

async function namespace(name: string): Promise<void> {
  const r = await api('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { suite: name } },
  });
  expect(r.status).toBe(201);
}

/** Polls `probe` until true (policies and bindings reach the plugin through a watch). */
async function until(probe: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function binding(name: string, policy: string, ns: string, actions: string, paramRef = ''): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policy}
  validationActions: [${actions}]
${paramRef}  matchResources:
    namespaceSelector:
      matchLabels:
        suite: ${ns}
`;
}

const MAX_SIZE_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-size
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  variables:
  - name: size
    expression: "int(object.data.size)"
  validations:
  - expression: "variables.size <= int(params.data.max)"
    messageExpression: "'size ' + string(variables.size) + ' exceeds ' + params.data.max"
`;

const PARAMS_BY_NAME = `  paramRef:
    name: limits
    namespace: vap-params
    parameterNotFoundAction: Deny
`;

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  for (const ns of ['vap-params', 'vap-deny', 'vap-warn', 'vap-sel', 'vap-bad', 'vap-ignore', 'vap-cost']) {
    await namespace(ns);
  }
  expect((await createConfigMap('vap-params', 'limits', { max: '3' })).status).toBe(201);
  await apply('max-size', MAX_SIZE_POLICY);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('ValidatingAdmissionPolicy', () => {
  it('denies with params by name and messageExpression (kubectl 1.33), 422 Invalid as kube', async () => {
    await apply('deny-b', binding('deny-b', 'max-size', 'vap-deny', 'Deny', PARAMS_BY_NAME));
    await until(
      async () =>
        (await createConfigMap('vap-deny', 'probe', { size: '9' }, {}, '?dryRun=All')).status !== 201,
    );
    const denied = await kubectl(['create', 'configmap', 'big', '-n', 'vap-deny', '--from-literal=size=5']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-size' with binding 'deny-b' denied request: size 5 exceeds 3`,
    );
    const ok = await kubectl(['create', 'configmap', 'small', '-n', 'vap-deny', '--from-literal=size=2']);
    expect(ok.code, ok.stderr).toBe(0);
    const raw = await createConfigMap('vap-deny', 'big', { size: '4' });
    const message = `ValidatingAdmissionPolicy 'max-size' with binding 'deny-b' denied request: size 4 exceeds 3`;
    expect(raw.status).toBe(422);
    expect(raw.json).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message: `configmaps "big" is forbidden: ${message}`,
      details: { name: 'big', kind: 'configmaps', causes: [{ message }] },
    });
    // matchConditions: an exempt object is not validated.
    expect((await createConfigMap('vap-deny', 'exempt', { size: '7' }, { exempt: 'yes' })).status).toBe(201);
    // An update is validated too; the params change live.
    const upd = await kubectl([
      'patch',
      'configmap',
      'small',
      '-n',
      'vap-deny',
      '-p',
      '{"data":{"size":"6"}}',
    ]);
    expect(upd.code).not.toBe(0);
    expect(upd.stderr).toContain('size 6 exceeds 3');
    const raise = await kubectl([
      'patch',
      'configmap',
      'limits',
      '-n',
      'vap-params',
      '-p',
      '{"data":{"max":"10"}}',
    ]);
    expect(raise.code, raise.stderr).toBe(0);
    await until(
      async () =>
        (await createConfigMap('vap-deny', 'probe', { size: '6' }, {}, '?dryRun=All')).status === 201,
    );
    const again = await kubectl([
      'patch',
      'configmap',
      'small',
      '-n',
      'vap-deny',
      '-p',
      '{"data":{"size":"6"}}',
    ]);
    expect(again.code, again.stderr).toBe(0);
  });

  it('warns with validationActions Warn and admits', async () => {
    await apply('warn-b', binding('warn-b', 'max-size', 'vap-warn', 'Warn', PARAMS_BY_NAME));
    await until(async () => {
      const r = await createConfigMap('vap-warn', 'probe', { size: '99' }, {}, '?dryRun=All');
      return String(r.headers['warning'] ?? '').includes('max-size');
    });
    const r = await kubectl(['create', 'configmap', 'big', '-n', 'vap-warn', '--from-literal=size=50']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `Warning: Validation failed for ValidatingAdmissionPolicy 'max-size' with binding 'warn-b': size 50 exceeds`,
    );
  });

  it('finds params by selector; none found with parameterNotFoundAction Deny refuses', async () => {
    await apply(
      'sel-b',
      binding(
        'sel-b',
        'max-size',
        'vap-sel',
        'Deny',
        `  paramRef:
    namespace: vap-params
    selector:
      matchLabels:
        tier: gold
    parameterNotFoundAction: Deny
`,
      ),
    );
    await until(
      async () =>
        (await createConfigMap('vap-sel', 'probe', { size: '1' }, {}, '?dryRun=All')).status !== 201,
    );
    const none = await createConfigMap('vap-sel', 'x', { size: '1' });
    expect(none.json['message']).toBe(
      `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'max-size' with binding 'sel-b' denied request: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
    );
    expect((await createConfigMap('vap-params', 'gold-a', { max: '5' }, { tier: 'gold' })).status).toBe(201);
    expect((await createConfigMap('vap-params', 'gold-b', { max: '8' }, { tier: 'gold' })).status).toBe(201);
    await until(
      async () =>
        (await createConfigMap('vap-sel', 'probe', { size: '1' }, {}, '?dryRun=All')).status === 201,
    );
    // Every selected param must pass: 6 passes gold-b (8) but not gold-a (5).
    const r = await createConfigMap('vap-sel', 'six', { size: '6' });
    expect(r.status).toBe(422);
    expect(r.json['message']).toContain('size 6 exceeds 5');
    expect((await createConfigMap('vap-sel', 'four', { size: '4' })).status).toBe(201);
  });

  it('an expression that errs fails closed (Fail) or open (Ignore); status.typeChecking is written', async () => {
    const policy = (
      name: string,
      failurePolicy: string,
      reason = '',
    ) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "int(object.metadata.name) > 0"
    message: never shown
  - expression: "object.metadata.name != 'forbidden'"
    message: that name is taken
${reason === '' ? '' : `    reason: ${reason}\n`}`;
    await apply('bad', policy('bad', 'Fail'));
    await apply('bad-b', binding('bad-b', 'bad', 'vap-bad', 'Deny'));
    await apply('lenient', policy('lenient', 'Ignore', 'Forbidden'));
    await apply('lenient-b', binding('lenient-b', 'lenient', 'vap-ignore', 'Deny'));
    await until(
      async () => (await createConfigMap('vap-bad', 'probe', {}, {}, '?dryRun=All')).status !== 201,
    );
    const r = await createConfigMap('vap-bad', 'x', {});
    expect(r.status).toBe(422);
    expect(String(r.json['message'])).toMatch(
      /^configmaps "x" is forbidden: ValidatingAdmissionPolicy 'bad' with binding 'bad-b' denied request: expression 'int\(object.metadata.name\) > 0' resulted in error: /,
    );
    // Ignore: the broken validation is skipped, the good one still denies with its reason.
    await until(
      async () => (await createConfigMap('vap-ignore', 'forbidden', {}, {}, '?dryRun=All')).status !== 201,
    );
    expect((await createConfigMap('vap-ignore', 'fine', {})).status).toBe(201);
    const taken = await createConfigMap('vap-ignore', 'forbidden', {});
    expect(taken.status).toBe(403);
    expect(taken.json).toMatchObject({
      reason: 'Forbidden',
      message: `configmaps "forbidden" is forbidden: ValidatingAdmissionPolicy 'lenient' with binding 'lenient-b' denied request: that name is taken`,
    });
    // Type checking reaches the policy's status.
    let status: Json = {};
    await until(async () => {
      const got = await api('GET', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/bad');
      status = (got.json['status'] ?? {}) as Json;
      return status['observedGeneration'] === 1;
    });
    expect(status['typeChecking']).toEqual({});
  });

  it('refuses, unrun, an expression whose cost on the request is over the per-call limit', async () => {
    await apply(
      'runaway',
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: runaway
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "object.data.all(a, object.data.all(b, object.data.all(c, object.data[c] != '')))"
`,
    );
    await apply('runaway-b', binding('runaway-b', 'runaway', 'vap-cost', 'Deny'));
    // kube's v1 defaults.
    const stored = await api(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/runaway',
    );
    expect(stored.json['spec']).toMatchObject({
      failurePolicy: 'Fail',
      matchConstraints: {
        matchPolicy: 'Equivalent',
        namespaceSelector: {},
        objectSelector: {},
        resourceRules: [{ scope: '*' }],
      },
    });
    await until(
      async () => (await createConfigMap('vap-cost', 'probe', { a: '' }, {}, '?dryRun=All')).status !== 201,
    );
    // Three keys: cheap, and run (an empty value fails it, else it passes).
    expect((await createConfigMap('vap-cost', 'small', { a: '1', b: '2', c: '3' })).status).toBe(201);
    const empty = await createConfigMap('vap-cost', 'empty', { a: '1', b: '' });
    expect(empty.status).toBe(422);
    expect(empty.json['message']).toContain('failed expression: object.data.all(');
    // 300 keys: 27 million iterations; refused at once by its cost.
    const data: Record<string, string> = {};
    for (let i = 0; i < 300; i++) data[`k${i}`] = 'v';
    const started = Date.now();
    const big = await createConfigMap('vap-cost', 'big', data);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(big.status).toBe(422);
    expect(big.json['message']).toBe(
      `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'runaway' with binding 'runaway-b' denied request: expression '${"object.data.all(a, object.data.all(b, object.data.all(c, object.data[c] != '')))"}' resulted in error: operation cancelled: actual cost limit exceeded`,
    );
  });

  it('refuses malformed policies and bindings at creation (422, kube field paths)', async () => {
    const b = await api('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'broken' },
      spec: { paramRef: { name: 'a', selector: {}, parameterNotFoundAction: 'Deny' } },
    });
    expect(b.status).toBe(422);
    expect(b.json['message']).toBe(
      'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "broken" is invalid: [spec.policyName: Required value, spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.validationActions: Required value: at least one validation action is required]',
    );
    const p = await api('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'broken' },
      spec: { failurePolicy: 'Sometimes', validations: [{ expression: ' ', reason: 'Teapot' }] },
    });
    expect(p.status).toBe(422);
    const causes = ((p.json['details'] as Json)['causes'] as Json[]).map((c) => c['field']);
    expect(causes).toEqual([
      'spec.failurePolicy',
      'spec.matchConstraints',
      'spec.validations[0].expression',
      'spec.validations[0].reason',
    ]);
  });
});
