/**
 * Values of the wrong JSON type are refused as kube-apiserver's typed decoder refuses them, with
 * its messages (each expected message below is kube-apiserver v1.33's answer to the same
 * request), so no object is stored that a typed client could not read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startResourceApp, type ResourceApp } from './resources.support.js';

const NS = '/api/v1/namespaces/default';
const CONTAINER = (extra: string): string =>
  `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i",${extra}}]}}`;

describe('typed decoding of request bodies', () => {
  let s: ResourceApp;
  beforeAll(async () => {
    s = await startResourceApp();
  });
  afterAll(async () => {
    await s.close();
  });

  // A raw JSON text body (a parse would lose what these tests send: `__proto__` keys, fractions).
  const send = (...request: Parameters<typeof json>) => s.request(json(...request));

  it.each([
    [
      'configmaps',
      '{"metadata":{"name":"x"},"data":{"a":{"b":1}}}',
      'ConfigMap',
      'object into Go struct field ConfigMap.data of type string',
    ],
    [
      'configmaps',
      '{"metadata":{"name":"x"},"data":{"a":5}}',
      'ConfigMap',
      'number into Go struct field ConfigMap.data of type string',
    ],
    [
      'configmaps',
      '{"metadata":{"name":"x"},"data":["a"]}',
      'ConfigMap',
      'array into Go struct field ConfigMap.data of type map[string]string',
    ],
    [
      'configmaps',
      '{"metadata":{"name":"x"},"immutable":"yes"}',
      'ConfigMap',
      'string into Go struct field ConfigMap.immutable of type bool',
    ],
    [
      'configmaps',
      '{"metadata":{"name":"x","labels":{"a":1}}}',
      'ConfigMap',
      'number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      'configmaps',
      '{"metadata":{"name":"x","creationTimestamp":5}}',
      'ConfigMap',
      'number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    ],
    // The first error in document order.
    [
      'configmaps',
      '{"metadata":{"name":"x"},"data":{"a":5},"immutable":"x"}',
      'ConfigMap',
      'number into Go struct field ConfigMap.data of type string',
    ],
    [
      'secrets',
      '{"metadata":{"name":"x"},"data":{"a":5}}',
      'Secret',
      'number into Go struct field Secret.data of type []uint8',
    ],
    [
      'pods',
      '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":5}]}}',
      'Pod',
      'number into Go struct field Container.spec.containers.image of type string',
    ],
    [
      'pods',
      '{"metadata":{"name":"p"},"spec":{"containers":{}}}',
      'Pod',
      'object into Go struct field PodSpec.spec.containers of type []v1.Container',
    ],
    [
      'pods',
      '{"metadata":{"name":"p"},"spec":{"containers":["x"]}}',
      'Pod',
      'string into Go struct field PodSpec.spec.containers of type v1.Container',
    ],
    [
      'pods',
      '{"metadata":{"name":"p"},"spec":"x"}',
      'Pod',
      'string into Go struct field Pod.spec of type v1.PodSpec',
    ],
    [
      'pods',
      CONTAINER('"args":["a",2]'),
      'Pod',
      'number into Go struct field Container.spec.containers.args of type string',
    ],
    [
      'pods',
      CONTAINER('"ports":[{"containerPort":1.5}]'),
      'Pod',
      'number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      'pods',
      CONTAINER('"ports":[{"containerPort":3000000000}]'),
      'Pod',
      'number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      'pods',
      CONTAINER('"ports":[{"containerPort":"80"}]'),
      'Pod',
      'string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      'pods',
      CONTAINER('"livenessProbe":{"httpGet":{"port":1.5}}'),
      'Pod',
      'number 1.5 into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32',
    ],
    [
      'pods',
      CONTAINER('"livenessProbe":{"httpGet":{"port":true}}'),
      'Pod',
      'bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32',
    ],
  ])('POST %s %s: 400 "json: cannot unmarshal %s"', async (resource, body, kind, detail) => {
    const r = await send('POST', `${NS}/${resource}`, body);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({
      reason: 'BadRequest',
      message: `${kind} in version "v1" cannot be handled as a ${kind}: json: cannot unmarshal ${detail}`,
    });
  });

  it('a time Go cannot parse: 400 with Go time.Parse error (kube-apiserver v1.33.13 wording)', async () => {
    const cases: Array<[string, string, string, string]> = [
      [
        '/apis/coordination.k8s.io/v1/namespaces/default/leases',
        '{"metadata":{"name":"l"},"spec":{"renewTime":"2026-12-05T12:00:00Z"}}',
        'Lease',
        'parsing time "2026-12-05T12:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
      ],
      [
        `${NS}/configmaps`,
        '{"metadata":{"name":"c","creationTimestamp":"x"}}',
        'ConfigMap',
        'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"',
      ],
    ];
    for (const [path, body, kind, detail] of cases) {
      const r = await send('POST', path, body);
      expect(r.statusCode).toBe(400);
      expect(r.json()['message']).toBe(`${kind} in version "v1" cannot be handled as a ${kind}: ${detail}`);
    }
    const ok = await send(
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      '{"metadata":{"name":"l"},"spec":{"renewTime":"2026-12-05T12:00:00.123456Z"}}',
    );
    expect(ok.statusCode).toBe(201);
  });

  it('a Quantity that is no string or number: the quantity format error', async () => {
    for (const value of ['{}', 'true']) {
      const r = await send('POST', `${NS}/pods`, CONTAINER(`"resources":{"limits":{"cpu":${value}}}`));
      expect(r.statusCode).toBe(400);
      expect(r.json()['message']).toBe(
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      );
    }
  });

  it.each([
    ['a!b', 1],
    ['YWJ', 0],
    ['YW Jj', 2],
  ])('Secret data %j: 400 with Go base64 error at byte %i', async (value, at) => {
    const r = await send('POST', `${NS}/secrets`, `{"metadata":{"name":"s"},"data":{"k":"${value}"}}`);
    expect(r.statusCode).toBe(400);
    expect(r.json()['message']).toBe(
      `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at}`,
    );
  });

  it.each([
    [
      'activeDeadlineSeconds',
      '"5"',
      'string into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64',
    ],
  ])('pods spec.%s %s', async (field, value, detail) => {
    const r = await send(
      'POST',
      `${NS}/pods`,
      `{"metadata":{"name":"p"},"spec":{"${field}":${value},"containers":[{"name":"c","image":"i"}]}}`,
    );
    expect(r.json()['message']).toBe(
      `Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal ${detail}`,
    );
  });

  it.each([
    ['"generation":"1"', 'string into Go struct field ObjectMeta.metadata.generation of type int64'],
    ['"finalizers":[1]', 'number into Go struct field ObjectMeta.metadata.finalizers of type string'],
    [
      '"ownerReferences":["x"]',
      'string into Go struct field ObjectMeta.metadata.ownerReferences of type v1.OwnerReference',
    ],
  ])('metadata {%s}', async (member, detail) => {
    const r = await send('POST', `${NS}/configmaps`, `{"metadata":{"name":"m",${member}}}`);
    expect(r.json()['message']).toBe(
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ${detail}`,
    );
  });

  it('a fraction where an int32 belongs in apps/v1', async () => {
    const r = await send(
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      '{"metadata":{"name":"d"},"spec":{"replicas":1.5,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}',
    );
    expect(r.json()['message']).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
  });

  it('null map entries and list items become the zero value, as Go stores them', async () => {
    const r = await send('POST', `${NS}/configmaps`, '{"metadata":{"name":"nul"},"data":{"a":null,"b":"x"}}');
    expect(r.statusCode).toBe(201);
    expect(r.json()['data']).toEqual({ a: '', b: 'x' });
    const pod = await send('POST', `${NS}/pods`, CONTAINER('"args":["a",null]').replace('"p"', '"nul"'));
    expect(pod.statusCode).toBe(201);
    expect(
      (pod.json()['spec'] as unknown as { containers: { args: string[] }[] }).containers[0]?.args,
    ).toEqual(['a', '']);
  });

  describe('on an existing object', () => {
    beforeAll(async () => {
      expect(
        (await send('POST', `${NS}/configmaps`, '{"metadata":{"name":"good"},"data":{"a":"1"}}')).statusCode,
      ).toBe(201);
    });

    it('PUT: 400 as a create', async () => {
      const r = await send('PUT', `${NS}/configmaps/good`, '{"metadata":{"name":"good"},"data":{"n":5}}');
      expect(r.statusCode).toBe(400);
      expect(r.json()['message']).toBe(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
      );
    });

    it.each([
      ['application/merge-patch+json', '{"data":{"n":5}}', 'number'],
      ['application/json-patch+json', '[{"op":"add","path":"/data/o","value":{}}]', 'object'],
    ])('%s: 422 on the field patch, with the patched object', async (type, patch, what) => {
      const r = await send('PATCH', `${NS}/configmaps/good`, patch, type);
      expect(r.statusCode).toBe(422);
      const status = r.json() as unknown as {
        reason: string;
        message: string;
        details: { causes: { field: string; reason: string; message: string }[] };
      };
      const detail = `json: cannot unmarshal ${what} into Go struct field ConfigMap.data of type string`;
      expect(status.reason).toBe('Invalid');
      expect(status.message).toMatch(
        /^ "" is invalid: patch: Invalid value: "\{.*\\"data\\":\{\\"a\\":\\"1\\",.*\}": /,
      );
      expect(status.message.endsWith(detail)).toBe(true);
      expect(status.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          field: 'patch',
          message: status.message.slice(' "" is invalid: patch: '.length),
        },
      ]);
    });

    it.each([
      ['{"data":{"n":5}}', 'map[data:map[n:5]]', 'cannot convert int64 to string'],
      ['{"data":{"o":{"x":1}}}', 'map[data:map[o:map[x:1]]]', 'unrecognized type: string'],
      ['{"immutable":5}', 'map[immutable:5]', 'unrecognized type: bool'],
      // Go's reflect.Kind names a boolean bool (kube v1.33.13's answers).
      ['{"data":true}', 'map[data:true]', 'cannot restore map from bool'],
      ['{"data":[1]}', 'map[data:[1]]', 'cannot restore map from slice'],
    ])(
      "strategic merge patch %s: 422 in the unstructured converter's words",
      async (patch, shown, detail) => {
        const r = await send(
          'PATCH',
          `${NS}/configmaps/good`,
          patch,
          'application/strategic-merge-patch+json',
        );
        expect(r.statusCode).toBe(422);
        const message = `Invalid value: "${shown}": ${detail}`;
        expect(r.json()).toMatchObject({
          reason: 'Invalid',
          message: ` "" is invalid: patch: ${message}`,
          details: { causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }] },
        });
      },
    );

    it.each([
      ['"data":{"n":5}', '.data.n: expected string, got &value.valueUnstructured{Value:5}'],
      [
        '"data":{"o":{"x":1}}',
        '.data.o: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"x":1}}',
      ],
      ['"immutable":"yes"', '.immutable: expected boolean, got &{yes}'],
      // Go's float64 forms, and %v (not %#v) inside a boolean's error: kube v1.33.13's answers.
      [
        '"data":{"f":1500000.5}',
        '.data.f: expected string, got &value.valueUnstructured{Value:1.5000005e+06}',
      ],
      ['"data":{"f":0.00001}', '.data.f: expected string, got &value.valueUnstructured{Value:1e-05}'],
      ['"immutable":[1.5e9,"x"]', '.immutable: expected boolean, got &{[1500000000 x]}'],
      ['"immutable":{"a":0.25}', '.immutable: expected boolean, got &{map[a:0.25]}'],
    ])('apply {%s}: the typed patch object error', async (member, detail) => {
      const r = await send(
        'PATCH',
        `${NS}/configmaps/good?fieldManager=x`,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"good"},${member}}`,
        'application/apply-patch+yaml',
      );
      expect(r.json()['message']).toBe(
        `failed to create typed patch object (/good; /v1, Kind=ConfigMap): ${detail}`,
      );
    });

    it('PUT binaryData of the wrong type', async () => {
      const r = await send(
        'PUT',
        `${NS}/configmaps/good`,
        '{"metadata":{"name":"good"},"binaryData":{"b":5}}',
      );
      expect(r.json()['message']).toBe(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []uint8',
      );
    });

    it('nothing refused was stored', async () => {
      const r = await s.request({ method: 'GET', url: `${NS}/configmaps/good` });
      expect(r.json()['data']).toEqual({ a: '1' });
    });
  });
});
