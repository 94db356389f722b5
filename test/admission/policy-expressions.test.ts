/**
 * CEL in admission objects on one RBAC server: expressions are compiled when a
 * ValidatingAdmissionPolicy or a webhook configuration is written, and refused with kube's 422
 * field errors (messages checked against kube-apiserver v1.33 with the same objects); the
 * `authorizer` variable asks the server's authorizer for the requesting user, in policies and
 * in webhook matchConditions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

type Json = Record<string, unknown>;

let server: TestServer;
let tls: AdminTls;

async function api(method: string, path: string, body?: unknown, user?: string) {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(user === undefined ? {} : { 'Impersonate-User': user }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let json: Json = {};
  try {
    json = JSON.parse(res.body) as Json;
  } catch {
    // not JSON
  }
  return { status: res.status, json };
}

const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

function policy(name: string, spec: Json): Json {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
        ],
      },
      ...spec,
    },
  };
}

function configMap(ns: string, name: string): Json {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns } };
}

/** Polls `probe` until true (policies reach the plugin through a watch). */
async function until(probe: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  server = await startTestServer({ args: ['--authorization-mode=RBAC'] });
  tls = adminTls(server.kubeconfigPath);
  for (const ns of ['vap-authz', 'hook-authz']) {
    const r = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { suite: ns } },
    });
    expect(r.status).toBe(201);
  }
  // alice may create ConfigMaps in both namespaces; whether she may list Secrets is the test.
  const role = await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'cm-writer' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }],
  });
  expect(role.status).toBe(201);
  const binding = await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'alice-cm-writer' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cm-writer' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
  });
  expect(binding.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('admission expressions', () => {
  it('refuses a policy whose expressions do not compile or have the wrong type, with kube’s 422 message', async () => {
    const r = await api(
      'POST',
      VAP,
      policy('typed', {
        matchConditions: [
          { name: 'b', expression: 'params.x == 1' },
          { name: 'c', expression: "'x'" },
        ],
        variables: [
          { name: 'a', expression: '[1, 2]' },
          { name: 'b', expression: 'variables.nope == 1' },
        ],
        validations: [
          { expression: 'object.data' },
          { expression: "object.metadata.name + 1 == 'x'" },
          { expression: 'true', messageExpression: 'variables.a' },
          { expression: 'true', messageExpression: "'a' + 1" },
          { expression: "request.nope == 'x'" },
          { expression: "authorizer.group('').resource('pods').check('get').allowed()" },
          { expression: 'true', messageExpression: "authorizer.path('/x').check('get').reason()" },
          { expression: 'namespaceObject.metadata.nope == 1' },
          { expression: '1 == 1 && undefinedVar' },
        ],
        auditAnnotations: [
          { key: 'k1', valueExpression: '1' },
          { key: 'k3', valueExpression: 'null' },
          { key: 'k4', valueExpression: 'object.x' },
        ],
      }),
    );
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    // kube-apiserver v1.33.13's answer to the same object, verbatim.
    expect(r.json['message']).toBe(
      "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"typed\" is invalid: [spec.matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^, spec.matchConditions[1].expression: Invalid value: \"'x'\": must evaluate to bool but got string, spec.variables[1].expression: Invalid value: \"variables.nope == 1\": compilation failed: ERROR: <input>:1:10: undefined field 'nope'\n | variables.nope == 1\n | .........^, spec.validations[0].expression: Invalid value: \"object.data\": must evaluate to bool but got dyn, spec.validations[1].expression: Invalid value: \"object.metadata.name + 1 == 'x'\": compilation failed: ERROR: <input>:1:26: found no matching overload for '_==_' applied to '(int, string)'\n | object.metadata.name + 1 == 'x'\n | .........................^, spec.validations[2].messageExpression: Invalid value: \"variables.a\": must evaluate to string but got list(int), spec.validations[3].messageExpression: Invalid value: \"'a' + 1\": compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n | 'a' + 1\n | ....^, spec.validations[4].expression: Invalid value: \"request.nope == 'x'\": compilation failed: ERROR: <input>:1:8: undefined field 'nope'\n | request.nope == 'x'\n | .......^, spec.validations[6].messageExpression: Invalid value: \"authorizer.path('/x').check('get').reason()\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/x').check('get').reason()\n | ^, spec.validations[7].expression: Invalid value: \"namespaceObject.metadata.nope == 1\": compilation failed: ERROR: <input>:1:25: undefined field 'nope'\n | namespaceObject.metadata.nope == 1\n | ........................^, spec.validations[8].expression: Invalid value: \"1 == 1 && undefinedVar\": compilation failed: ERROR: <input>:1:11: undeclared reference to 'undefinedVar' (in container '')\n | 1 == 1 && undefinedVar\n | ..........^, spec.auditAnnotations[0].valueExpression: Invalid value: \"1\": must evaluate to one of [string null_type] but got int, spec.auditAnnotations[2].valueExpression: Invalid value: \"object.x\": must evaluate to one of [string null_type] but got dyn]",
    );
    const causes = ((r.json['details'] as Json)['causes'] as Json[]).map((c) => c['field']);
    expect(causes[0]).toBe('spec.matchConditions[0].expression');
    // A syntax error is refused too (cel-js words it differently from cel-go).
    const syntax = await api('POST', VAP, policy('syntax', { validations: [{ expression: '1 + ' }] }));
    expect(syntax.status).toBe(422);
    expect(String(syntax.json['message'])).toMatch(
      /spec\.validations\[0\]\.expression: Invalid value: "1 \+ ": compilation failed: ERROR: <input>:1:5: .*\n \| 1 \+ \n \| \.\.\.\.\^$/,
    );
  });

  it('orders structural and expression errors as kube does', async () => {
    const r = await api('POST', VAP, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'mixed' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
          ],
        },
        matchConditions: [
          { name: '', expression: '' },
          { name: 'a b', expression: '1' },
          { name: 'x', expression: 'true' },
          { name: 'x', expression: 'request.nope' },
        ],
        variables: [
          { name: '', expression: '' },
          { name: '1x', expression: "1 + 'a'" },
          { name: 'in', expression: 'true' },
        ],
        validations: [
          { expression: ' ', message: 'a\nb' },
          { expression: '1', reason: 'Nope', messageExpression: ' ' },
        ],
        auditAnnotations: [
          { key: 'k', valueExpression: ' ' },
          { key: 'k', valueExpression: '1' },
        ],
      },
    });
    expect(r.status).toBe(422);
    // kube-apiserver v1.33.13's answer to the same object, verbatim.
    expect(r.json['message']).toBe(
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "mixed" is invalid: [spec.matchConditions[0].expression: Required value, spec.matchConditions[0].name: Required value, spec.matchConditions[1].expression: Invalid value: "1": must evaluate to bool but got int, spec.matchConditions[1].name: Invalid value: "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\'), spec.matchConditions[3].expression: Invalid value: "request.nope": compilation failed: ERROR: <input>:1:8: undefined field \'nope\'\n | request.nope\n | .......^, spec.matchConditions[3].name: Duplicate value: "x", spec.variables[0].name: Required value: name is not specified, spec.variables[0].expression: Required value: expression is not specified, spec.variables[1].name: Invalid value: "1x": name is not a valid CEL identifier, spec.variables[1].expression: Invalid value: "1 + \'a\'": compilation failed: ERROR: <input>:1:3: found no matching overload for \'_+_\' applied to \'(int, string)\'\n | 1 + \'a\'\n | ..^, spec.variables[2].name: Invalid value: "in": name is not a valid CEL identifier, spec.validations[0].expression: Required value: expression is not specified, spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks, spec.validations[1].expression: Invalid value: "1": must evaluate to bool but got int, spec.validations[1].messageExpression: Invalid value: " ": must be non-empty if specified, spec.validations[1].reason: Unsupported value: "Nope": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified, spec.auditAnnotations[1].valueExpression: Invalid value: "1": must evaluate to one of [string null_type] but got int, spec.auditAnnotations[1].key: Duplicate value: "k"]',
    );
  });

  it('checks paramKind and bindings as kube does', async () => {
    const cases: [string, Json, string][] = [
      [
        VAP,
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: 'pk' },
          spec: {
            failurePolicy: 'Fail',
            paramKind: { apiVersion: 'Bad_Group/V1', kind: 'my_kind' },
            matchConstraints: {
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
              ],
            },
            validations: [{ expression: 'true' }],
          },
        },
        "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"pk\" is invalid: [spec.paramKind.apiVersion: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.paramKind.apiVersion: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.paramKind.kind: Invalid value: \"my_kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]",
      ],
      [
        VAP,
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: 'pk2' },
          spec: {
            failurePolicy: 'Fail',
            paramKind: { apiVersion: 'a/b/c', kind: 'Kind' },
            matchConstraints: {
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
              ],
            },
            validations: [{ expression: 'true' }],
          },
        },
        'ValidatingAdmissionPolicy.admissionregistration.k8s.io "pk2" is invalid: spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      ],
      [
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: 'b2' },
          spec: {
            policyName: 'Bad_Name',
            paramRef: { name: 'a/b', parameterNotFoundAction: 'Deny' },
            validationActions: ['Deny'],
            matchResources: {
              matchPolicy: 'Sometimes',
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: [] },
              ],
            },
          },
        },
        'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b2" is invalid: [spec.policyName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\'), spec.paramRef.name: Invalid value: "a/b": may not contain \'/\', spec.matchResources.matchPolicy: Unsupported value: "Sometimes": supported values: "Equivalent", "Exact", spec.matchResources.resourceRules[0].resources: Required value]',
      ],
    ];
    for (const [path, body, message] of cases) {
      const r = await api('POST', path, body);
      expect(r.status).toBe(422);
      // kube-apiserver v1.33.13's answers, verbatim.
      expect(r.json['message']).toBe(message);
    }
  });

  it('checks an update as a create, and params only with a paramKind', async () => {
    const ok = await api(
      'POST',
      VAP,
      policy('evolving', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConditions: [{ name: 'has-params', expression: 'params != null' }],
        validations: [{ expression: "has(object.data) || params.data.x == 'y'" }],
      }),
    );
    expect(ok.status, JSON.stringify(ok.json)).toBe(201);
    const stored = ok.json as { metadata: Json; spec: Json };
    // No resourceVersion: the type-checking status write may land first.
    const { resourceVersion: _rv, ...metadata } = stored.metadata;
    const bad = await api('PUT', `${VAP}/evolving`, {
      ...stored,
      metadata,
      spec: { ...stored.spec, validations: [{ expression: 'object.metadata.name' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.json['message']).toBe(
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "evolving" is invalid: spec.validations[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn',
    );
  });

  it('refuses webhook matchConditions that do not compile (kube’s message)', async () => {
    const r = await api('POST', VWC, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'w1' },
      webhooks: [
        {
          name: 'a.example.com',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: 'https://127.0.0.1:1/x' },
          matchConditions: [
            { name: 'ok', expression: "authorizer.group('').resource('secrets').check('list').allowed()" },
            { name: 'p', expression: 'params.x' },
            { name: 'v', expression: 'variables.x' },
            { name: 's', expression: 'request.name' },
            { name: '', expression: '' },
            { name: 'ok', expression: "namespaceObject.metadata.name == 'x'" },
          ],
        },
      ],
    });
    expect(r.status).toBe(422);
    expect(r.json['message']).toBe(
      'ValidatingWebhookConfiguration.admissionregistration.k8s.io "w1" is invalid: [webhooks[0].matchConditions[1].expression: Invalid value: "params.x": compilation failed: ERROR: <input>:1:1: undeclared reference to \'params\' (in container \'\')\n | params.x\n | ^, webhooks[0].matchConditions[2].expression: Invalid value: "variables.x": compilation failed: ERROR: <input>:1:1: undeclared reference to \'variables\' (in container \'\')\n | variables.x\n | ^, webhooks[0].matchConditions[3].expression: Invalid value: "request.name": must evaluate to bool but got string, webhooks[0].matchConditions[4].expression: Required value, webhooks[0].matchConditions[4].name: Required value, webhooks[0].matchConditions[5].name: Duplicate value: "ok"]',
    );
  });

  it('type checks a policy against the kinds it matches and reports kube’s warnings in status', async () => {
    const created = await api('POST', VAP, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'typo' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE'],
              resources: ['deployments', 'replicasets'],
            },
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
          ],
        },
        validations: [
          {
            expression: 'object.spec.replicass > 1',
            messageExpression: "'x' + string(object.spec.replicas)",
          },
          {
            expression:
              "has(object.spec.template) && object.spec.template.spec.containers.all(c, c.image != '')",
          },
          { expression: "object.metadata.name != 'x' && object.data.x == 'y'" },
          { expression: "object.kind != '' && object.apiVersion != ''" },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    let status: Json = {};
    await until(async () => {
      const got = await api('GET', `${VAP}/typo`);
      status = (got.json['status'] ?? {}) as Json;
      return status['observedGeneration'] === 1;
    });
    const warnings = (status['typeChecking'] as Json)['expressionWarnings'] as Json[];
    // kube's fieldRefs and text: one block per kind (group/version, Kind=...), kinds sorted.
    expect(warnings.map((w) => w['fieldRef'])).toEqual([
      'spec.validations[0].expression',
      'spec.validations[0].messageExpression',
      'spec.validations[1].expression',
      'spec.validations[2].expression',
    ]);
    expect(warnings[0]?.['warning']).toBe(
      "/v1, Kind=ConfigMap: compilation failed: ERROR: <input>:1:7: undefined field 'spec'\n | object.spec.replicass > 1\n | ......^\n\napps/v1, Kind=Deployment: compilation failed: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n\napps/v1, Kind=ReplicaSet: compilation failed: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n",
    );
    expect(String(warnings[2]?.['warning'])).toMatch(/^\/v1, Kind=ConfigMap: compilation failed: /);
    expect(String(warnings[3]?.['warning'])).not.toContain('ConfigMap');
  });

  it('denies on the first failing validation with kube’s runtime error text', async () => {
    expect(
      (
        await api(
          'POST',
          VAP,
          policy('runtime', {
            validations: [
              { expression: 'int(object.metadata.name) > 0' },
              { expression: "object.data.nope == 'x'" },
            ],
          }),
        )
      ).status,
    ).toBe(201);
    const bound = await api(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'runtime-b' },
        spec: {
          policyName: 'runtime',
          validationActions: ['Deny'],
          matchResources: { namespaceSelector: { matchLabels: { suite: 'vap-runtime' } } },
        },
      },
    );
    expect(bound.status).toBe(201);
    const ns = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'vap-runtime', labels: { suite: 'vap-runtime' } },
    });
    expect(ns.status).toBe(201);
    await until(
      async () =>
        (
          await api(
            'POST',
            '/api/v1/namespaces/vap-runtime/configmaps?dryRun=All',
            configMap('vap-runtime', 'p'),
          )
        ).status !== 201,
    );
    const r = await api('POST', '/api/v1/namespaces/vap-runtime/configmaps', {
      ...configMap('vap-runtime', 'x'),
      data: { a: 'b' },
    });
    expect(r.status).toBe(422);
    // kube-apiserver v1.33.13's answer to the same request.
    expect(r.json['message']).toBe(
      `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'runtime' with binding 'runtime-b' denied request: expression 'int(object.metadata.name) > 0' resulted in error: type conversion error from 'string' to 'int'`,
    );
  });

  it('checks webhook rules as kube does, in its order and words', async () => {
    const r = await api('POST', VWC, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'w2' },
      webhooks: [
        {
          name: 'a.example.com',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: 'https://127.0.0.1:1/x' },
          rules: [
            {
              apiGroups: ['*', 'apps'],
              apiVersions: [],
              operations: ['*', 'CREATE', 'NOPE'],
              resources: ['*', 'pods', '*/*'],
              scope: 'Everywhere',
            },
          ],
          matchConditions: [{ name: 'x', expression: '1' }],
        },
      ],
    });
    expect(r.status).toBe(422);
    // kube-apiserver v1.33.13's answer to the same object, verbatim.
    expect(r.json['message']).toBe(
      'ValidatingWebhookConfiguration.admissionregistration.k8s.io "w2" is invalid: [webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE", "NOPE"}: if \'*\' is present, must not specify other operations, webhooks[0].rules[0].operations[2]: Unsupported value: "NOPE": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE", webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups, webhooks[0].rules[0].apiVersions: Required value, webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods", "*/*"}: if \'*/*\' is present, must not specify other resources, webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods", "*/*"}: if \'*\' is present, must not specify other resources without subresources, webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced", webhooks[0].matchConditions[0].expression: Invalid value: "1": must evaluate to bool but got int]',
    );
  });

  it('asks the authorizer about the requesting user in a policy (authorizer, requestResource, serviceAccount)', async () => {
    const created = await api(
      'POST',
      VAP,
      policy('needs-secrets', {
        variables: [
          {
            name: 'canList',
            expression:
              "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()",
          },
        ],
        validations: [
          { expression: 'variables.canList', message: 'only those who may list secrets' },
          {
            expression: "authorizer.requestResource.check('create').allowed()",
            message: 'requestResource is the request itself',
          },
          {
            expression:
              "!authorizer.serviceAccount('vap-authz', 'nobody').group('').resource('configmaps').check('create').allowed()",
            message: 'a service account without roles is not allowed',
          },
          {
            expression: "!authorizer.path('/healthz').check('get').errored()",
            message: 'a path check does not err',
          },
        ],
      }),
    );
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const bound = await api(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'needs-secrets-b' },
        spec: {
          policyName: 'needs-secrets',
          validationActions: ['Deny'],
          matchResources: { namespaceSelector: { matchLabels: { suite: 'vap-authz' } } },
        },
      },
    );
    expect(bound.status).toBe(201);
    await until(
      async () =>
        (
          await api(
            'POST',
            '/api/v1/namespaces/vap-authz/configmaps?dryRun=All',
            configMap('vap-authz', 'p'),
            'alice',
          )
        ).status === 422,
    );
    const denied = await api(
      'POST',
      '/api/v1/namespaces/vap-authz/configmaps',
      configMap('vap-authz', 'a'),
      'alice',
    );
    expect(denied.status).toBe(422);
    expect(denied.json['message']).toBe(
      `configmaps "a" is forbidden: ValidatingAdmissionPolicy 'needs-secrets' with binding 'needs-secrets-b' denied request: only those who may list secrets`,
    );
    // The admin (system:masters) may list secrets: admitted.
    expect(
      (await api('POST', '/api/v1/namespaces/vap-authz/configmaps', configMap('vap-authz', 'b'))).status,
    ).toBe(201);
    // Once alice may list secrets in the namespace, she is admitted too.
    const role = await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/vap-authz/roles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'secret-lister', namespace: 'vap-authz' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
    });
    expect(role.status).toBe(201);
    const rb = await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/vap-authz/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-lists', namespace: 'vap-authz' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-lister' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    });
    expect(rb.status).toBe(201);
    await until(
      async () =>
        (
          await api(
            'POST',
            '/api/v1/namespaces/vap-authz/configmaps?dryRun=All',
            configMap('vap-authz', 'p'),
            'alice',
          )
        ).status === 201,
    );
    expect(
      (await api('POST', '/api/v1/namespaces/vap-authz/configmaps', configMap('vap-authz', 'c'), 'alice'))
        .status,
    ).toBe(201);
  });

  it('asks the authorizer in webhook matchConditions: a webhook is called only for users the condition selects', async () => {
    // The webhook's URL answers nothing: calling it fails the request (failurePolicy Fail).
    const r = await api('POST', VWC, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'unreachable' },
      webhooks: [
        {
          name: 'unreachable.example.com',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          timeoutSeconds: 2,
          clientConfig: { url: 'https://127.0.0.1:1/validate' },
          namespaceSelector: { matchLabels: { suite: 'hook-authz' } },
          rules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
          ],
          matchConditions: [
            {
              name: 'cannot-list-secrets',
              expression:
                "!authorizer.group('').resource('secrets').namespace('hook-authz').check('list').allowed()",
            },
          ],
        },
      ],
    });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    // alice may not list secrets there: the webhook is called, and fails.
    await until(
      async () =>
        (
          await api(
            'POST',
            '/api/v1/namespaces/hook-authz/configmaps?dryRun=All',
            configMap('hook-authz', 'p'),
            'alice',
          )
        ).status !== 201,
    );
    const called = await api(
      'POST',
      '/api/v1/namespaces/hook-authz/configmaps',
      configMap('hook-authz', 'a'),
      'alice',
    );
    expect(called.status).toBe(500);
    expect(String(called.json['message'])).toContain('failed calling webhook "unreachable.example.com"');
    // The admin may: the condition is false, the webhook is skipped.
    expect(
      (await api('POST', '/api/v1/namespaces/hook-authz/configmaps', configMap('hook-authz', 'b'))).status,
    ).toBe(201);
  });
});
