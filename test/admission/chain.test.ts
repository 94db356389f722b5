/**
 * The admission seam in the resource handler: which attributes a plugin sees on create, update,
 * patch, status writes and delete; that a mutation is stored; that a refusal stores nothing; that
 * dry-run is reported; that warnings and the validating phase's position (after the strategy's
 * validation) hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin } from '../../src/admission/index.js';
import { forbidden } from '../../src/api/errors.js';
import { startResourceApp, type ResourceApp } from '../server/resources.support.js';

interface Seen {
  readonly phase: 'admit' | 'validate';
  readonly operation: string;
  readonly kind: string;
  readonly subresource: string | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly dryRun: boolean;
  readonly object: unknown;
  readonly oldObject: unknown;
}

const seen: Seen[] = [];

function record(phase: Seen['phase'], a: AdmissionAttributes): void {
  seen.push({
    phase,
    operation: a.operation,
    kind: a.type.kind,
    subresource: a.subresource,
    namespace: a.namespace,
    name: a.name,
    dryRun: a.dryRun,
    object: a.object === undefined ? undefined : structuredClone(a.object),
    oldObject: a.oldObject === undefined ? undefined : structuredClone(a.oldObject),
  });
}

/** Labels every ConfigMap `admitted=yes`; refuses ConfigMaps labelled `refuse`. */
const plugin: AdmissionPlugin = {
  name: 'TestRecorder',
  handles: (a) => a.type.kind === 'ConfigMap',
  admit: (a) => {
    record('admit', a);
    if (a.object !== undefined) a.object.metadata.labels = { ...a.object.metadata.labels, admitted: 'yes' };
  },
  validate: (a) => {
    record('validate', a);
    if (a.object?.metadata.labels?.['refuse'] !== undefined) {
      a.warn('refusing as asked');
      throw forbidden(`configmaps "${a.object.metadata.name}" is forbidden: refused by TestRecorder`);
    }
  },
};

let app: ResourceApp;
const base = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  app = await startResourceApp({ admission: new AdmissionChain([plugin]) });
  await app.request({
    method: 'POST',
    url: '/api/v1/namespaces',
    payload: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
  });
});
afterAll(async () => app.close());

describe('the admission chain in the write path', () => {
  it('admits a create with the defaulted object, then validates the prepared one, and stores the mutation', async () => {
    seen.length = 0;
    const res = await app.request({
      method: 'POST',
      url: base,
      payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().metadata.labels).toEqual({ admitted: 'yes' });
    expect(seen.map((s) => [s.phase, s.operation, s.kind, s.namespace, s.name])).toEqual([
      ['admit', 'CREATE', 'ConfigMap', 'default', 'a'],
      ['validate', 'CREATE', 'ConfigMap', 'default', 'a'],
    ]);
    // Mutating admission runs before the server fills uid and creationTimestamp (kube's order).
    const admitted = seen[0]?.object as { metadata: Record<string, unknown> };
    expect(admitted.metadata['uid']).toBeUndefined();
    const validated = seen[1]?.object as { metadata: Record<string, unknown> };
    expect(validated.metadata['uid']).toEqual(expect.any(String));
    const got = await app.request({ method: 'GET', url: `${base}/a` });
    expect(got.json().metadata.labels).toEqual({ admitted: 'yes' });
  });

  it('gives an update the stored object as oldObject, and a status write its subresource', async () => {
    seen.length = 0;
    const res = await app.request({
      method: 'PATCH',
      url: `${base}/a`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: { data: { k: 'w' } },
    });
    expect(res.statusCode).toBe(200);
    expect(seen.map((s) => [s.phase, s.operation])).toEqual([
      ['admit', 'UPDATE'],
      ['validate', 'UPDATE'],
    ]);
    expect((seen[0]?.oldObject as { data: unknown }).data).toEqual({ k: 'v' });
    expect((seen[0]?.object as { data: unknown }).data).toEqual({ k: 'w' });
  });

  it('refuses with the plugin’s 403 and stores nothing', async () => {
    const res = await app.request({
      method: 'POST',
      url: base,
      payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r', labels: { refuse: '1' } } },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('configmaps "r" is forbidden: refused by TestRecorder');
    expect((await app.request({ method: 'GET', url: `${base}/r` })).statusCode).toBe(404);
  });

  it('never reaches validating admission when the strategy’s validation fails', async () => {
    seen.length = 0;
    const res = await app.request({
      method: 'POST',
      url: base,
      payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } },
    });
    expect(res.statusCode).toBe(422);
    expect(seen.map((s) => s.phase)).toEqual(['admit']);
  });

  it('reports dry-run and runs DELETE with the stored object', async () => {
    seen.length = 0;
    const dry = await app.request({ method: 'DELETE', url: `${base}/a?dryRun=All` });
    expect(dry.statusCode).toBe(200);
    expect(seen.map((s) => [s.phase, s.operation, s.dryRun, s.object])).toEqual([
      ['admit', 'DELETE', true, undefined],
      ['validate', 'DELETE', true, undefined],
    ]);
    expect((seen[0]?.oldObject as { metadata: { name: string } }).metadata.name).toBe('a');
    expect((await app.request({ method: 'GET', url: `${base}/a` })).statusCode).toBe(200);
    seen.length = 0;
    expect((await app.request({ method: 'DELETE', url: `${base}/a` })).statusCode).toBe(200);
    expect(seen.map((s) => [s.operation, s.dryRun])).toEqual([
      ['DELETE', false],
      ['DELETE', false],
    ]);
  });

  it('leaves kinds the plugin does not handle alone', async () => {
    seen.length = 0;
    const res = await app.request({
      method: 'POST',
      url: '/api/v1/namespaces/default/secrets',
      payload: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
    });
    expect(res.statusCode).toBe(201);
    expect(seen).toEqual([]);
  });
});
