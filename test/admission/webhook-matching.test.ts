/**
 * The webhook plugins' pure parts against kube's tables: rule matching (operations, groups,
 * versions, `*`, `<resource>/<subresource>`, `*\/status`, scope with the Namespace special case),
 * matchPolicy Equivalent over the registry's shared-storage types, object selectors on new or
 * old labels, which labels the namespace selector reads, the defaults of a stored
 * configuration, service resolution (EndpointSlices, then Endpoints; ready endpoints only), the review request's fields, the response checks, the denial Status, and the
 * JSON Patch applier.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object.js';
import { SERVER_USER } from '../../src/api/user.js';
import type { AdmissionAttributes } from '../../src/admission/index.js';
import { webhooksOf } from '../../src/admission/webhook/configurations.js';
import { deniedError } from '../../src/admission/webhook/errors.js';
import {
  invocationType,
  isExempt,
  namespaceLabelSource,
  objectSelectorMatches,
  ruleMatches,
} from '../../src/admission/webhook/matching.js';
import { admissionRequest, reviewVersion, verifyResponse } from '../../src/admission/webhook/review.js';
import { asType } from '../../src/admission/webhook/selection.js';
import { resolveServiceEndpoint, type ServiceObjects } from '../../src/admission/webhook/service-resolver.js';
import type { WebhookRule, WebhookSpec } from '../../src/admission/webhook/types.js';
import { loadRegistry } from '../../src/registry/registry.js';
import type { ResourceType } from '../../src/registry/types.js';

const registry = loadRegistry();

function type(group: string, version: string, kind: string): ResourceType {
  const t = registry.byKind(group, version, kind);
  if (t === undefined) throw new Error(`no ${group}/${version} ${kind}`);
  return t;
}

function attrs(over: Partial<AdmissionAttributes> & { type: ResourceType }): AdmissionAttributes {
  return {
    operation: 'CREATE',
    subresource: undefined,
    namespace: 'ns',
    name: 'x',
    object: { apiVersion: over.type.apiVersion, kind: over.type.kind, metadata: { name: 'x' } },
    oldObject: undefined,
    options: {},
    dryRun: false,
    user: SERVER_USER,
    warn: () => undefined,
    annotate: () => undefined,
    ...over,
  };
}

function rule(over: Partial<WebhookRule> = {}): WebhookRule {
  return { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*', ...over };
}

function spec(over: Partial<WebhookSpec> = {}): WebhookSpec {
  const [w] = webhooksOf(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'cfg' },
      webhooks: [{ name: 'w.example.com', clientConfig: { url: 'https://h/' } }],
    },
    false,
  );
  return { ...(w as WebhookSpec), ...over };
}

const pods = type('', 'v1', 'Pod');
const namespaces = type('', 'v1', 'Namespace');

describe('rules', () => {
  it('match operation, group, version and resource exactly or by *', () => {
    const a = attrs({ type: pods });
    expect(ruleMatches(rule(), a, pods)).toBe(true);
    expect(ruleMatches(rule({ operations: ['UPDATE'] }), a, pods)).toBe(false);
    expect(ruleMatches(rule({ apiGroups: ['apps'] }), a, pods)).toBe(false);
    expect(ruleMatches(rule({ apiVersions: ['v2'] }), a, pods)).toBe(false);
    expect(ruleMatches(rule({ resources: ['pods'] }), a, pods)).toBe(true);
    expect(ruleMatches(rule({ resources: ['services'] }), a, pods)).toBe(false);
  });

  it('tell subresources apart: pods, pods/status, */status, pods/*', () => {
    const main = attrs({ type: pods });
    const status = attrs({ type: pods, subresource: 'status', operation: 'UPDATE' });
    expect(ruleMatches(rule({ resources: ['pods'] }), status, pods)).toBe(false);
    expect(ruleMatches(rule({ resources: ['pods/status'] }), status, pods)).toBe(true);
    expect(ruleMatches(rule({ resources: ['*/status'] }), status, pods)).toBe(true);
    expect(ruleMatches(rule({ resources: ['*/status'] }), main, pods)).toBe(false);
    expect(ruleMatches(rule({ resources: ['pods/*'] }), status, pods)).toBe(true);
    expect(ruleMatches(rule({ resources: ['pods/*'] }), main, pods)).toBe(true);
    expect(ruleMatches(rule({ resources: ['*'] }), status, pods)).toBe(false);
  });

  it('apply scope, with a Namespace counted as cluster-scoped', () => {
    const namespaced = attrs({ type: pods });
    const ns = attrs({ type: namespaces, namespace: 'x', name: 'x' });
    expect(ruleMatches(rule({ scope: 'Namespaced' }), namespaced, pods)).toBe(true);
    expect(ruleMatches(rule({ scope: 'Cluster' }), namespaced, pods)).toBe(false);
    expect(ruleMatches(rule({ scope: 'Cluster' }), ns, namespaces)).toBe(true);
    expect(ruleMatches(rule({ scope: 'Namespaced' }), ns, namespaces)).toBe(false);
  });

  it('never send the admission configuration kinds', () => {
    expect(
      isExempt(attrs({ type: type('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration') })),
    ).toBe(true);
    expect(isExempt(attrs({ type: pods }))).toBe(false);
  });
});

describe('matchPolicy', () => {
  const coreEvent = type('', 'v1', 'Event');
  const eventsEvent = type('events.k8s.io', 'v1', 'Event');
  const onlyEventsApi = rule({ apiGroups: ['events.k8s.io'], resources: ['events'] });

  it('Equivalent calls a webhook for the same objects under another group, converting them', () => {
    const a = attrs({
      type: coreEvent,
      object: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'e', namespace: 'ns' },
        reason: 'Started',
        involvedObject: { kind: 'Pod', name: 'p' },
      },
    });
    const t = invocationType(spec({ rules: [onlyEventsApi], matchPolicy: 'Equivalent' }), a, registry);
    expect(t).toBe(eventsEvent);
    const converted = asType(a.object, eventsEvent) as KubeObject;
    expect(converted.apiVersion).toBe('events.k8s.io/v1');
    expect(converted['regarding']).toEqual({ kind: 'Pod', name: 'p' });
    const request = admissionRequest('u', a, eventsEvent, converted, undefined);
    expect(request['kind']).toEqual({ group: 'events.k8s.io', version: 'v1', kind: 'Event' });
    expect(request['requestKind']).toEqual({ group: '', version: 'v1', kind: 'Event' });
    expect(request['resource']).toEqual({ group: 'events.k8s.io', version: 'v1', resource: 'events' });
  });

  it('Exact does not', () => {
    const a = attrs({ type: coreEvent });
    expect(
      invocationType(spec({ rules: [onlyEventsApi], matchPolicy: 'Exact' }), a, registry),
    ).toBeUndefined();
  });
});

describe('selectors', () => {
  it('match the object selector on the new or the old object', () => {
    const w = spec({ objectSelector: { matchLabels: { a: '1' } } });
    const labelled = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', labels: { a: '1' } } };
    const plain = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } };
    expect(objectSelectorMatches(w, attrs({ type: pods, object: plain }))).toBe(false);
    expect(objectSelectorMatches(w, attrs({ type: pods, object: labelled }))).toBe(true);
    expect(
      objectSelectorMatches(
        w,
        attrs({ type: pods, operation: 'UPDATE', object: plain, oldObject: labelled }),
      ),
    ).toBe(true);
    expect(
      objectSelectorMatches(
        w,
        attrs({ type: pods, operation: 'DELETE', object: undefined, oldObject: labelled }),
      ),
    ).toBe(true);
  });

  it('read a Namespace’s own labels on its create and update, and look it up on delete', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { env: 'prod' } } };
    expect(namespaceLabelSource(attrs({ type: namespaces, name: 'n', namespace: '', object: ns }))).toEqual({
      labels: { env: 'prod' },
    });
    expect(
      namespaceLabelSource(
        attrs({
          type: namespaces,
          name: 'n',
          namespace: '',
          operation: 'DELETE',
          object: undefined,
          oldObject: ns,
        }),
      ),
    ).toEqual({ lookup: 'n' });
    expect(namespaceLabelSource(attrs({ type: pods, namespace: 'team' }))).toEqual({ lookup: 'team' });
  });
});

describe('configurations', () => {
  it('fill kube’s v1 defaults and cap timeoutSeconds', () => {
    const [m] = webhooksOf(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'c' },
        webhooks: [
          {
            name: 'a.b.c',
            clientConfig: {
              service: { namespace: 'n', name: 's' },
              caBundle: Buffer.from('PEM').toString('base64'),
            },
            timeoutSeconds: 99,
          },
        ],
      },
      true,
    );
    expect(m).toMatchObject({
      uid: 'c/a.b.c/0',
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: 30,
      reinvocationPolicy: 'Never',
      clientConfig: { service: { namespace: 'n', name: 's', path: '', port: 443 }, caBundle: 'PEM' },
    });
  });
});

describe('reviews', () => {
  it('pick the first version Capstan speaks', () => {
    expect(reviewVersion(['v2', 'v1beta1', 'v1'])).toBe('v1beta1');
    expect(reviewVersion(['v2'])).toBeUndefined();
  });

  it('name a Namespace’s update or delete after itself, as kube’s request info does', () => {
    const del = attrs({
      type: namespaces,
      namespace: '',
      name: 'team',
      operation: 'DELETE',
      object: undefined,
    });
    expect(admissionRequest('u', del, namespaces, undefined, undefined)['namespace']).toBe('team');
    const create = attrs({ type: namespaces, namespace: '', name: 'team' });
    expect(admissionRequest('u', create, namespaces, create.object, undefined)['namespace']).toBeUndefined();
  });

  it('check v1 answers as kube does', () => {
    const ok = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u', allowed: true },
    };
    expect(verifyResponse('v1', 'u', false, ok).allowed).toBe(true);
    expect(() => verifyResponse('v1', 'u', false, {})).toThrow('webhook response was absent');
    expect(() => verifyResponse('v1', 'u', false, { ...ok, apiVersion: 'v1' })).toThrow(
      'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, Kind=AdmissionReview',
    );
    const patch = Buffer.from('[]').toString('base64');
    expect(() =>
      verifyResponse('v1', 'u', true, { ...ok, response: { uid: 'u', allowed: true, patch } }),
    ).toThrow('webhook returned response.patch but not response.patchType');
    expect(() =>
      verifyResponse('v1', 'u', true, {
        ...ok,
        response: { uid: 'u', allowed: true, patchType: 'JSONPatch' },
      }),
    ).toThrow('webhook returned response.patchType but not response.patch');
    expect(() =>
      verifyResponse('v1', 'u', false, {
        ...ok,
        response: { uid: 'u', allowed: true, patchType: 'JSONPatch' },
      }),
    ).toThrow('validating webhook may not return response.patchType');
    // v1beta1: no uid or kind checks; a patch is JSONPatch.
    const beta = verifyResponse('v1beta1', 'u', true, { response: { allowed: true, patch } });
    expect(beta.patchType).toBe('JSONPatch');
  });

  it('word a denial as kube, with at least a 400', () => {
    expect(deniedError('w', { message: 'm', code: 409, reason: 'Conflict' })).toMatchObject({
      message: 'admission webhook "w" denied the request: m',
      code: 409,
      reason: 'Conflict',
    });
    expect(deniedError('w', { reason: 'NotMine', code: 200 })).toMatchObject({
      message: 'admission webhook "w" denied the request: NotMine',
      code: 400,
    });
    expect(deniedError('w', undefined).message).toBe(
      'admission webhook "w" denied the request without explanation',
    );
  });
});

describe('service resolution', () => {
  const svc = (ports: unknown[], type = 'ClusterIP'): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 's', namespace: 'n' },
    spec: { type, ports },
  });
  const objects = (o: {
    service?: KubeObject;
    slices?: KubeObject[];
    endpoints?: KubeObject;
  }): ServiceObjects => ({
    service: () => Promise.resolve(o.service),
    endpointSlices: () => Promise.resolve(o.slices ?? []),
    endpoints: () => Promise.resolve(o.endpoints),
  });
  const slice = (endpoints: unknown[], ports: unknown[]): KubeObject => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 's-1', namespace: 'n' },
    endpoints,
    ports,
  });

  it('picks a ready EndpointSlice address on the port named as the service port', async () => {
    const o = objects({
      service: svc([{ name: 'web', port: 443, targetPort: 8443 }]),
      slices: [
        slice(
          [
            { addresses: ['10.0.0.1'], conditions: { ready: false } },
            { addresses: ['10.0.0.2'], conditions: { ready: true } },
          ],
          [
            { name: 'other', port: 1 },
            { name: 'web', port: 8443 },
          ],
        ),
      ],
    });
    expect(await resolveServiceEndpoint(o, 'n', 's', 443)).toEqual({ host: '10.0.0.2', port: 8443 });
  });

  it('falls back to Endpoints when the service has no EndpointSlice', async () => {
    const o = objects({
      service: svc([{ port: 443 }]),
      endpoints: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 's', namespace: 'n' },
        subsets: [{ addresses: [{ ip: '10.0.0.9' }], ports: [{ port: 9443 }] }],
      },
    });
    expect(await resolveServiceEndpoint(o, 'n', 's', 443)).toEqual({ host: '10.0.0.9', port: 9443 });
  });

  it('fails with kube’s messages', async () => {
    await expect(resolveServiceEndpoint(objects({}), 'n', 's', 443)).rejects.toThrow('service "s" not found');
    await expect(
      resolveServiceEndpoint(objects({ service: svc([{ port: 443 }], 'ExternalName') }), 'n', 's', 443),
    ).rejects.toThrow('unsupported service type "ExternalName"');
    await expect(
      resolveServiceEndpoint(objects({ service: svc([{ port: 80 }]) }), 'n', 's', 443),
    ).rejects.toThrow('no service port 443 found for service "s"');
    const notReady = objects({
      service: svc([{ port: 443 }]),
      slices: [slice([{ addresses: ['10.0.0.1'], conditions: { ready: false } }], [{ port: 8443 }])],
    });
    await expect(resolveServiceEndpoint(notReady, 'n', 's', 443)).rejects.toThrow(
      'no endpoints available for service "s"',
    );
  });
});
