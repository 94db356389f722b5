/**
 * A member named `__proto__` is data like any other (a ConfigMap key may be `__proto__`, as in
 * kube): every write path keeps it, and none of them sets an object's prototype from it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startResourceApp, type ResourceApp } from './resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('a __proto__ key', () => {
  let s: ResourceApp;
  beforeEach(async () => {
    s = await startResourceApp();
  });
  afterEach(async () => {
    await s.close();
  });

  // A raw JSON text body (a parse would lose what these tests send: `__proto__` keys, fractions).
  const send = (...request: Parameters<typeof json>) => s.request(json(...request));

  /** The stored data, read back, as raw JSON text and keys. */
  async function storedData(name: string): Promise<{ keys: string[]; text: string }> {
    const r = await s.request({ method: 'GET', url: `${CM}/${name}` });
    expect(r.statusCode).toBe(200);
    const data = (JSON.parse(r.body) as { data: Record<string, unknown> }).data;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    return { keys: Object.keys(data).sort(), text: r.body };
  }

  it('is kept by create and update', async () => {
    const created = await send('POST', CM, '{"metadata":{"name":"c"},"data":{"__proto__":"p","a":"1"}}');
    expect(created.statusCode).toBe(201);
    expect((await storedData('c')).keys).toEqual(['__proto__', 'a']);
    const rv = created.json()['metadata'].resourceVersion;
    const updated = await send(
      'PUT',
      `${CM}/c`,
      `{"metadata":{"name":"c","resourceVersion":"${rv}"},"data":{"__proto__":"q"}}`,
    );
    expect(updated.statusCode).toBe(200);
    const after = await storedData('c');
    expect(after.keys).toEqual(['__proto__']);
    expect(after.text).toContain('"__proto__":"q"');
  });

  it.each([
    ['merge patch', 'application/merge-patch+json', '{"data":{"__proto__":"p"}}'],
    ['strategic merge patch', 'application/strategic-merge-patch+json', '{"data":{"__proto__":"p"}}'],
    ['JSON patch', 'application/json-patch+json', '[{"op":"add","path":"/data/__proto__","value":"p"}]'],
  ])('is added by a %s', async (_, type, patch) => {
    expect((await send('POST', CM, '{"metadata":{"name":"c"},"data":{"a":"1"}}')).statusCode).toBe(201);
    const r = await send('PATCH', `${CM}/c`, patch, type);
    expect(r.statusCode).toBe(200);
    const after = await storedData('c');
    expect(after.keys).toEqual(['__proto__', 'a']);
    expect(after.text).toContain('"__proto__":"p"');
  });

  it('is applied, owned and removed by server-side apply', async () => {
    const apply = (data: string) =>
      send(
        'PATCH',
        `${CM}/c?fieldManager=me`,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":${data}}`,
        'application/apply-patch+yaml',
      );
    expect((await apply('{"__proto__":"p","a":"1"}')).statusCode).toBe(201);
    const first = await storedData('c');
    expect(first.keys).toEqual(['__proto__', 'a']);
    expect(first.text).toContain('"f:__proto__":{}');
    expect((await apply('{"a":"1"}')).statusCode).toBe(200);
    expect((await storedData('c')).keys).toEqual(['a']);
  });

  it.each([
    ['merge patch', 'application/merge-patch+json', '{"data":{"__proto__":{"polluted":"yes"}}}'],
    [
      'strategic merge patch',
      'application/strategic-merge-patch+json',
      '{"data":{"__proto__":{"polluted":"yes"}}}',
    ],
    [
      'JSON patch',
      'application/json-patch+json',
      '[{"op":"add","path":"/data/__proto__","value":{"polluted":"yes"}}]',
    ],
    [
      'apply patch',
      'application/apply-patch+yaml',
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"__proto__":{"polluted":"yes"}}}',
    ],
  ])('never reaches Object.prototype through a %s', async (_, type, patch) => {
    expect((await send('POST', CM, '{"metadata":{"name":"c"},"data":{"a":"1"}}')).statusCode).toBe(201);
    const r = await send('PATCH', `${CM}/c?fieldManager=me`, patch, type);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    // An object where a string belongs: refused, and nothing stored.
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.statusCode).toBeLessThan(500);
    expect((await storedData('c')).keys).toEqual(['a']);
  });
});
