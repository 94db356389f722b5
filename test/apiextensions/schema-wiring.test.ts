/**
 * The custom resource strategy asks the version's structural schema (src/schema) at kube's
 * points of the write path. The schema library is another module; here a recording fake stands
 * in for it behind the same interface, and real creates and updates run through the resource
 * handlers (createResource, updateResource) over a memory store: unknown fields pruned and
 * reported per `fieldValidation` with kube's wording, defaults applied, schema errors a 422 with
 * the custom kind.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { JsonObject } from '../../src/api/object.js';
import { ApiError } from '../../src/api/errors.js';
import { CustomStrategy } from '../../src/kinds/index.js';
import { LayeredRegistry } from '../../src/registry/layered.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { createResourceContext, type Target } from '../../src/resource/context.js';
import { createResource } from '../../src/resource/create.js';
import { updateResource } from '../../src/resource/update.js';
import { readWriteOptions, type RequestFacts } from '../../src/resource/write-options.js';
import { SERVER_USER } from '../../src/api/user.js';
import type { StructuralSchema } from '../../src/schema/index.js';
import { readDefinition, servedTypes } from '../../src/apiextensions/index.js';
import { invalid } from '../../src/validation/field-error.js';

/** A schema that knows `spec.size` (default 1, at most 10) and nothing else under spec. */
function fakeSchema(calls: string[]): StructuralSchema {
  return {
    applyDefaults(obj: JsonObject) {
      calls.push('default');
      const spec = obj['spec'] as JsonObject | undefined;
      if (spec !== undefined && spec['size'] === undefined) spec['size'] = 1;
    },
    prune(obj: JsonObject) {
      calls.push('prune');
      const spec = (obj['spec'] ?? {}) as JsonObject;
      const unknown = Object.keys(spec).filter((k) => k !== 'size');
      for (const k of unknown) delete spec[k];
      return unknown.map((k) => `spec.${k}`);
    },
    validate(obj: JsonObject, old: JsonObject | undefined) {
      calls.push(old === undefined ? 'validate' : 'validate-update');
      const size = (obj['spec'] as JsonObject | undefined)?.['size'];
      return typeof size === 'number' && size > 10 ? [invalid('spec.size', size, 'must be at most 10')] : [];
    },
    applyType: { kind: 'leaf', scalar: false },
  };
}

async function setup(calls: string[]) {
  const registry = new LayeredRegistry(loadRegistry());
  const def = readDefinition({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.dev' },
    spec: {
      group: 'example.dev',
      scope: 'Namespaced',
      names: { plural: 'things', kind: 'Thing' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
    },
    status: { acceptedNames: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' } },
  });
  const [type] = servedTypes(def);
  if (type === undefined) throw new Error('no served type');
  const ctx = createResourceContext({
    registry,
    store: await openMemoryStore(),
    eventTtlSeconds: 0,
    minRequestTimeoutSeconds: 1800,
  });
  ctx.strategies.set(
    type,
    new CustomStrategy({
      group: 'example.dev',
      kind: 'Thing',
      versions: [
        {
          name: 'v1',
          schema: fakeSchema(calls),
          hasStatus: false,
          scale: undefined,
          columns: [],
          selectableFields: [],
        },
      ],
    }),
  );
  registry.setCustom(def.name, [type]);
  const namespaces = registry.byResource('', 'v1', 'namespaces');
  if (namespaces === undefined) throw new Error('no namespaces');
  const nsTarget: Target = {
    type: namespaces,
    namespace: undefined,
    name: undefined,
    subresource: undefined,
  };
  await createResource(ctx, nsTarget, { metadata: { name: 'default' } });
  const target: Target = { type, namespace: 'default', name: undefined, subresource: undefined };
  return { ctx, target };
}

const body = (spec: JsonObject): JsonObject => ({
  apiVersion: 'example.dev/v1',
  kind: 'Thing',
  metadata: { name: 'a' },
  spec,
});

/** What the route would pass for a test client. */
function requestFacts(warnings: string[] = []): RequestFacts {
  return { userAgent: 'test', warnings, user: SERVER_USER, auditAnnotations: {} };
}

describe('the custom resource strategy and the structural schema', () => {
  it('prunes unknown fields with warnings (Warn), defaults, then validates', async () => {
    const calls: string[] = [];
    const { ctx, target } = await setup(calls);
    const warnings: string[] = [];
    const write = readWriteOptions({}, 'CreateOptions', requestFacts(warnings));
    const reply = await createResource(ctx, target, body({ colour: 'red' }), write);
    expect(reply.code).toBe(201);
    const stored = JSON.parse(Buffer.from(reply.body as Uint8Array).toString('utf8')) as JsonObject;
    expect(stored['spec']).toEqual({ size: 1 });
    expect(warnings).toEqual(['unknown field "spec.colour"']);
    expect(calls.indexOf('prune')).toBeLessThan(calls.indexOf('default'));
    expect(calls.indexOf('default')).toBeLessThan(calls.indexOf('validate'));
  });

  it("refuses unknown fields under Strict with kube's 400", async () => {
    const { ctx, target } = await setup([]);
    const write = readWriteOptions({ fieldValidation: 'Strict' }, 'CreateOptions', requestFacts());
    const err = await createResource(ctx, target, body({ colour: 'red' }), write).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(400);
    expect((err as ApiError).message).toBe(
      'Thing in version "v1" cannot be handled as a Thing: strict decoding error: unknown field "spec.colour"',
    );
  });

  it('answers schema errors with a 422 Invalid of the custom kind, on create and update', async () => {
    const calls: string[] = [];
    const { ctx, target } = await setup(calls);
    const write = readWriteOptions({}, 'CreateOptions', requestFacts());
    const err = await createResource(ctx, target, body({ size: 11 }), write).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe(422);
    expect((err as ApiError).message).toBe(
      'Thing.example.dev "a" is invalid: spec.size: Invalid value: 11: must be at most 10',
    );
    await createResource(ctx, target, body({ size: 2 }), write);
    const update = readWriteOptions({}, 'UpdateOptions', requestFacts());
    const err2 = await updateResource(ctx, { ...target, name: 'a' }, body({ size: 12 }), update).catch(
      (e: unknown) => e,
    );
    expect((err2 as ApiError).code).toBe(422);
    expect(calls).toContain('validate-update');
  });
});
