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

  it("refuse in kube-apiserver v1.33's words (read from it)", () => {
    const refusal = (text: string): string => {
      try {
        LabelSelector.parse(text);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const requirement = (detail: string): string => `unable to parse requirement: ${detail}`;
    expect(refusal('a=b c')).toBe("found 'c', expected: ',' or 'end of string'");
    expect(refusal('a=b,')).toBe("found '', expected: identifier after ','");
    expect(refusal('=b')).toBe("found '=', expected: !, identifier, or 'end of string'");
    expect(refusal('!a=b')).toBe("found '=', expected: ',' or 'end of string'");
    expect(refusal('a in b')).toBe(requirement("found 'b' expected: '('"));
    expect(refusal('a in (b c)')).toBe(requirement("found 'c', expected: ',' or ')'"));
    expect(refusal('a in (x,=)')).toBe(requirement("found '=', expected: ',', or identifier"));
    expect(refusal('a in (=)')).toBe(requirement("found '=', expected: ',', ')' or identifier"));
    expect(refusal('a=(')).toBe(requirement("found '(', expected: identifier"));
    expect(refusal('a>x')).toBe(
      requirement(`values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`),
    );
    expect(refusal('a in (x,B@d)')).toMatch(
      /^unable to parse requirement: values\[0\]\[a\]: Invalid value: "B@d": /,
    );
    expect(refusal('A_/b=c')).toMatch(/^unable to parse requirement: <nil>: Invalid value: "A_\/b": /);
    for (const ok of ['a in ()', 'a==', 'a in (b,,c)', 'a in (,b)', 'a in (b),c'])
      expect(refusal(ok)).toBe('accepted');
    expect(LabelSelector.parse('a in (,b)').matches({ a: '' })).toBe(true);
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
    expect(() => FieldSelector.parse('metadata.name', { group: '', kind: 'Pod' })).toThrow(ApiError);
  });

  it("refuse other fields in the words of the kind's conversion in kube-apiserver v1.33", () => {
    const refusal = (kind: string, group: string, selectable?: string[]): string => {
      try {
        FieldSelector.parse('spec.bogus=x', { group, kind }, selectable);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const generic = '"spec.bogus" is not a known field selector: only "metadata.name", "metadata.namespace"';
    expect(refusal('Deployment', 'apps')).toBe(generic);
    expect(refusal('ConfigMap', '')).toBe(generic);
    expect(refusal('Pod', '')).toBe('field label not supported: spec.bogus');
    expect(refusal('Event', 'events.k8s.io')).toBe('field label not supported: spec.bogus');
    expect(refusal('Job', 'batch')).toBe('field label "spec.bogus" not supported for Job');
    expect(refusal('Gadget', 'example.com', [])).toBe('field label not supported: spec.bogus');
    expect(refusal('Gadget', 'example.com', ['spec.color'])).toBe('field label not supported: spec.bogus');
    // apps/v1 ReplicaSets select on metadata only (status.replicas was extensions/v1beta1's).
    expect(() => FieldSelector.parse('status.replicas=0', { group: 'apps', kind: 'ReplicaSet' })).toThrow(
      '"status.replicas" is not a known field selector',
    );
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
