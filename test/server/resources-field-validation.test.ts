/**
 * Field validation (`fieldValidation=Strict|Warn|Ignore`): the duplicate-key scanners, then
 * unknown and duplicate fields through create, update, patch and apply in each mode.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { duplicateJsonFields, duplicateYamlKeys } from '../../src/resource/fields/duplicates.js';
import { startResourceApp, type ResourceApp } from './resources.support.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

describe('duplicate-key scanners', () => {
  it('JSON: kube paths, nested objects and list items, escaped keys, none for clean bodies', () => {
    expect(duplicateJsonFields('{"a":1,"b":{"c":[{"d":1,"d":2}],"c":3},"a":"x"}')).toEqual([
      'b.c[0].d',
      'b.c',
      'a',
    ]);
    expect(duplicateJsonFields('{"a\\u0062":1,"ab":2}')).toEqual(['ab']);
    expect(duplicateJsonFields('{"s":"{\\"a\\":1,\\"a\\":2}","t":[1,2,{}],"u":null}')).toEqual([]);
    expect(duplicateJsonFields(' [ {"a":true , "a" : false} ] ')).toEqual(['[0].a']);
  });

  it('YAML: one line per repeated key, with its line', () => {
    expect(duplicateYamlKeys('a: 1\nb:\n  c: 2\n  c: 3\na: 4\n')).toEqual([
      'line 4: key "c" already set in map',
      'line 5: key "a" already set in map',
    ]);
    expect(duplicateYamlKeys('a: [1, 2]\nb: {c: 1}\n')).toEqual([]);
  });
});

/** A Deployment body with an unknown field and a repeated `replicas` (JSON text). */
const BAD_BODY =
  '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,"replicas":2,' +
  '"bogus":true,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},' +
  '"spec":{"containers":[{"name":"c","image":"nginx","nope":1}]}}}}';

let s: ResourceApp;
beforeEach(async () => {
  s = await startResourceApp();
});
afterEach(async () => {
  await s.close();
});

function post(query: string, body = BAD_BODY, contentType = 'application/json') {
  return s.request({
    method: 'POST',
    url: `${DEPLOY}${query}`,
    headers: { 'content-type': contentType },
    payload: body,
  });
}

function warnings(h: string | string[] | number | undefined): string[] {
  if (h === undefined) return [];
  return (Array.isArray(h) ? h : String(h).split(/,(?=\s*299 )/)).map((w) => String(w).trim());
}

describe('field validation of object bodies', () => {
  it('Strict: 400 naming every unknown and duplicate field; nothing stored', async () => {
    const r = await post('?fieldValidation=Strict');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({
      reason: 'BadRequest',
      message:
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
        'unknown field "spec.bogus", unknown field "spec.template.spec.containers[0].nope", ' +
        'duplicate field "spec.replicas"',
    });
    expect((await s.request({ method: 'GET', url: `${DEPLOY}/d` })).statusCode).toBe(404);
  });

  it('Warn (the default): stored without the unknown fields, the last duplicate wins, one Warning each', async () => {
    for (const query of ['', '?fieldValidation=Warn']) {
      const r = await post(query);
      expect(r.statusCode).toBe(201);
      expect(warnings(r.headers['warning'])).toEqual([
        '299 - "unknown field \\"spec.bogus\\""',
        '299 - "unknown field \\"spec.template.spec.containers[0].nope\\""',
        '299 - "duplicate field \\"spec.replicas\\""',
      ]);
      const body = r.json() as unknown as { spec: Record<string, unknown> };
      expect(body.spec['replicas']).toBe(2);
      expect(body.spec['bogus']).toBeUndefined();
      await s.request({ method: 'DELETE', url: `${DEPLOY}/d` });
    }
  });

  it('Ignore: stored, unknown fields dropped, no warnings', async () => {
    const r = await post('?fieldValidation=Ignore');
    expect(r.statusCode).toBe(201);
    expect(r.headers['warning']).toBeUndefined();
    expect((r.json() as unknown as { spec: Record<string, unknown> }).spec['bogus']).toBeUndefined();
  });

  it('an unsupported mode is a 422 on CreateOptions', async () => {
    const r = await post('?fieldValidation=Loose');
    expect(r.statusCode).toBe(422);
    expect(r.json().details?.kind).toBe('CreateOptions');
  });

  it('YAML bodies report repeated keys with the YAML decoder message', async () => {
    const yaml =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  name: d\nspec:\n  selector:\n' +
      '    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n    spec:\n' +
      '      containers: [{name: c, image: nginx}]\n';
    const r = await post('?fieldValidation=Strict', yaml, 'application/yaml');
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toContain('yaml: unmarshal errors:\n  line 5: key "name" already set in map');
  });
});

describe('field validation of patches and apply', () => {
  const ok =
    '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},' +
    '"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}';

  beforeEach(async () => {
    expect((await post('', ok)).statusCode).toBe(201);
  });

  function patch(query: string, body: string, contentType: string) {
    return s.request({
      method: 'PATCH',
      url: `${DEPLOY}/d${query}`,
      headers: { 'content-type': contentType },
      payload: body,
    });
  }

  it('merge, strategic and JSON patches: Strict refuses, Warn warns and drops', async () => {
    const merge = await patch(
      '?fieldValidation=Strict',
      '{"spec":{"paused":true,"paused":false,"zzz":1}}',
      'application/merge-patch+json',
    );
    expect(merge.statusCode).toBe(400);
    expect(merge.json().message).toBe(
      'strict decoding error: unknown field "spec.zzz", duplicate field "spec.paused"',
    );
    const smp = await patch('', '{"spec":{"zzz":1}}', 'application/strategic-merge-patch+json');
    expect(smp.statusCode).toBe(200);
    expect(warnings(smp.headers['warning'])).toEqual(['299 - "unknown field \\"spec.zzz\\""']);
    expect((smp.json() as unknown as { spec: Record<string, unknown> }).spec['zzz']).toBeUndefined();
    const jsonPatch = await patch(
      '?fieldValidation=Strict',
      '[{"op":"add","path":"/spec/zzz","value":1}]',
      'application/json-patch+json',
    );
    expect(jsonPatch.statusCode).toBe(400);
  });

  it('apply: unknown fields are always a 400; repeated keys follow the mode', async () => {
    const unknown = await patch(
      '?fieldManager=m&fieldValidation=Ignore',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  zzz: 1\n',
      'application/apply-patch+yaml',
    );
    expect(unknown.statusCode).toBe(400);
    const dup =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  paused: true\n  paused: false\n';
    const strict = await patch('?fieldManager=m&fieldValidation=Strict', dup, 'application/apply-patch+yaml');
    expect(strict.statusCode).toBe(400);
    const warn = await patch('?fieldManager=m', dup, 'application/apply-patch+yaml');
    expect(warn.statusCode).toBe(200);
    expect(warnings(warn.headers['warning'])[0]).toContain('line 7: key \\"paused\\" already set in map');
  });
});
