/**
 * Unit tests of the resource layer's pure parts: the stored-bytes splice, selectors, path
 * resolution, generated names.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { FieldSelector } from '../../src/resource/field-selector.js';
import { LabelSelector } from '../../src/resource/label-selector.js';
import { generateName } from '../../src/resource/metadata.js';
import {
  decodeStored,
  encodeForStorage,
  withResourceVersion,
  type KubeObject,
} from '../../src/api/object.js';
import { selectorString } from '../../src/resource/scale.js';
import { resolveTarget } from '../../src/resource/target.js';

describe('stored bytes', () => {
  const obj: KubeObject = {
    spec: { template: { metadata: { name: 'inner' } } },
    metadata: { name: 'a', resourceVersion: '7', labels: { x: 'y' } },
    apiVersion: 'v1',
    kind: 'Pod',
  };

  it('are written kind, apiVersion, metadata first, without resourceVersion', () => {
    const text = Buffer.from(encodeForStorage(obj)).toString();
    expect(text.startsWith('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"')).toBe(true);
    expect(text).not.toContain('resourceVersion');
    expect(obj.metadata.resourceVersion).toBe('7');
  });

  it('get the resourceVersion spliced in without a parse, equal to the parse path', () => {
    const bytes = encodeForStorage(obj);
    const spliced = JSON.parse(withResourceVersion(bytes, 42n).toString()) as KubeObject;
    expect(spliced).toEqual(decodeStored(bytes, 42n));
    expect(spliced.metadata.resourceVersion).toBe('42');
    expect(spliced['spec']).toEqual({ template: { metadata: { name: 'inner' } } });
  });

  it('written by others (metadata not first, empty metadata) take the parse path', () => {
    const foreign = Buffer.from(
      JSON.stringify({ spec: { metadata: { name: 'x' } }, metadata: { name: 'real' } }),
    );
    const out = JSON.parse(withResourceVersion(foreign, 5n).toString()) as KubeObject;
    expect(out.metadata).toEqual({ name: 'real', resourceVersion: '5' });
    expect(out['spec']).toEqual({ metadata: { name: 'x' } });
    const empty = Buffer.from('{"kind":"X","metadata":{}}');
    expect(JSON.parse(withResourceVersion(empty, 3n).toString())).toEqual({
      kind: 'X',
      metadata: { resourceVersion: '3' },
    });
  });
});

describe('label selectors', () => {
  const l = { app: 'web', tier: 'front', n: '7' };
  const m = (s: string) => LabelSelector.parse(s).matches(l);

  it('match as kube does', () => {
    expect(m('app=web,tier in (front,back)')).toBe(true);
    expect(m('app!=web')).toBe(false);
    expect(m('missing!=x')).toBe(true);
    expect(m('missing notin (x)')).toBe(true);
    expect(m('missing in (x)')).toBe(false);
    expect(m('!missing,app')).toBe(true);
    expect(m('n>5,n<8')).toBe(true);
    expect(m('n>7')).toBe(false);
    expect(m('  app = web ,  tier  ')).toBe(true);
    expect(LabelSelector.parse(undefined).empty).toBe(true);
  });

  it('reject bad syntax and bad keys or values with 400', () => {
    for (const bad of ['app=web=x', 'app in', 'in (x)', '=x', 'app=bad value', 'n>x', 'a,,b', 'x/y/z=1']) {
      let err: unknown;
      try {
        LabelSelector.parse(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(400);
    }
  });
});

describe('field selectors', () => {
  it('parse escapes and pin single names', () => {
    const f = FieldSelector.parse('metadata.name=a\\,b', { group: '', kind: 'ConfigMap' });
    expect(f.singleName).toBe('a,b');
    expect(f.matches({ metadata: { name: 'a,b' } })).toBe(true);
    expect(f.matches({ metadata: { name: 'a' } })).toBe(false);
  });

  it('know per-kind fields and reject others', () => {
    const job = FieldSelector.parse('status.successful=0', { group: 'batch', kind: 'Job' });
    expect(job.matches({ metadata: {} })).toBe(true);
    expect(job.matches({ metadata: {}, status: { successful: 2 } })).toBe(false);
    expect(() => FieldSelector.parse('status.successful=0', { group: 'apps', kind: 'Deployment' })).toThrow(
      /field label not supported: status.successful/,
    );
    expect(() => FieldSelector.parse('metadata.name', { group: '', kind: 'Pod' })).toThrow(ApiError);
  });
});

describe('path resolution', () => {
  const registry = loadRegistry();
  const r = (path: string, group = '', version = 'v1') =>
    resolveTarget(registry, group, version, path.split('/'));

  it('resolves collections, items and subresources', () => {
    expect(r('namespaces/default/pods')).toMatchObject({
      type: { kind: 'Pod' },
      namespace: 'default',
      name: undefined,
    });
    expect(r('pods')).toMatchObject({ type: { kind: 'Pod' }, namespace: undefined });
    expect(r('namespaces/default/pods/p/status')).toMatchObject({ name: 'p', subresource: 'status' });
    expect(r('namespaces/x')).toMatchObject({ type: { kind: 'Namespace' }, name: 'x' });
    expect(r('namespaces/x/status')).toMatchObject({
      type: { kind: 'Namespace' },
      name: 'x',
      subresource: 'status',
    });
    expect(r('namespaces/x/finalize')).toMatchObject({
      type: { kind: 'Namespace' },
      subresource: 'finalize',
    });
    expect(r('nodes/n')).toMatchObject({ type: { kind: 'Node' }, name: 'n' });
    expect(r('namespaces/d/deployments/x/scale', 'apps')).toMatchObject({
      type: { kind: 'Deployment' },
      subresource: 'scale',
    });
  });

  it('refuses what kube does not serve', () => {
    for (const p of [
      'widgets',
      'pods/p',
      'namespaces/d/nodes',
      'namespaces/d/pods/p/scale',
      'namespaces/d/pods/p/status/x',
      'configmaps/..',
      'namespaces/d/pods/',
      '',
    ]) {
      expect(r(p), p).toBeUndefined();
    }
    expect(r('namespaces/d/deployments', 'apps', 'v1beta1')).toBeUndefined();
  });
});

describe('helpers', () => {
  it('generated names keep the result within 63 characters', () => {
    expect(generateName('x'.repeat(100))).toHaveLength(63);
  });

  it('label selectors render as kube strings (sorted by key)', () => {
    expect(
      selectorString(
        {
          matchLabels: { b: '2', a: '1' },
          matchExpressions: [
            { key: 'c', operator: 'In', values: ['y', 'x'] },
            { key: 'd', operator: 'DoesNotExist' },
          ],
        },
        false,
      ),
    ).toBe('a=1,b=2,c in (x,y),!d');
    expect(selectorString({}, false)).toBe('');
  });
});
