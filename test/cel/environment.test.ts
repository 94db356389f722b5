import { describe, expect, it } from 'vitest';
import { CelEnvironment, estimateCost, jsonToCel, type CelProgram } from '../../src/cel/index.js';

const env = new CelEnvironment({
  objectTypes: [
    { name: 'Item', fields: { name: 'string', n: 'int' } },
    {
      name: 'Spec',
      fields: { items: 'list<Item>', labels: 'map<string, string>', s: 'string', q: 'string' },
    },
  ],
  variables: { self: 'Spec', oldSelf: 'Spec' },
});

function program(expr: string): CelProgram {
  const c = env.compile(expr);
  if (!c.ok) throw new Error(c.message);
  return c.program;
}

const self = jsonToCel({
  items: [
    { name: 'a', n: 1 },
    { name: 'b', n: 2 },
  ],
  labels: { app: 'web' },
  s: '  Hello, World  ',
  q: '500m',
});
const run = (expr: string): unknown => {
  const r = program(expr).evaluate({ self, oldSelf: self });
  if (r.error !== undefined) throw new Error(r.error);
  return r.value;
};

describe('CelEnvironment', () => {
  it('macros: all, exists, exists_one, map, filter', () => {
    expect(run('self.items.all(i, i.n > 0)')).toBe(true);
    expect(run('self.items.exists(i, i.name == "b")')).toBe(true);
    expect(run('self.items.exists_one(i, i.n > 0)')).toBe(false);
    expect(run('self.items.map(i, i.n * 2)')).toEqual([2n, 4n]);
    expect(run('self.items.filter(i, i.n > 1).map(i, i.name)')).toEqual(['b']);
  });

  it('optional types and has()', () => {
    expect(run('self.labels.?missing.orValue("none")')).toBe('none');
    expect(run('self.?s.hasValue()')).toBe(true);
    expect(run('has(self.labels.app)')).toBe(true);
  });

  it('type checking: undefined fields and wrong operand types fail to compile with a position', () => {
    const bad = env.compile('self.nope == 1');
    expect(bad).toEqual({ ok: false, message: "ERROR: <input>:1:6: undefined field 'nope'" });
    const wrong = env.compile('self.s + 1');
    expect(wrong.ok).toBe(false);
    expect(env.compile('self.items.size()').ok && program('self.items.size()').outputType).toBe('int');
  });

  it('equality of objects compares values (self == oldSelf)', () => {
    expect(
      program('self == oldSelf').evaluate({ self, oldSelf: jsonToCel({ ...(self as object) }) }).value,
    ).toBe(true);
    expect(program('self != oldSelf').evaluate({ self, oldSelf: jsonToCel({ s: 'x' }) }).value).toBe(true);
  });

  it('Kubernetes list library', () => {
    expect(run('[1, 2, 3].isSorted() && ![2, 1].isSorted()')).toBe(true);
    expect(run('[1, 2, 3].sum()')).toBe(6n);
    expect(run('[3, 1, 2].min()')).toBe(1n);
    expect(run('["b", "c", "a"].max()')).toBe('c');
    expect(run('[1, 2, 1].indexOf(1)')).toBe(0n);
    expect(run('[1, 2, 1].lastIndexOf(1)')).toBe(2n);
  });

  it('Kubernetes string and regex libraries', () => {
    expect(run('self.s.trim()')).toBe('Hello, World');
    expect(run('self.s.trim().lowerAscii()')).toBe('hello, world');
    expect(run('self.s.trim().upperAscii()')).toBe('HELLO, WORLD');
    expect(run('self.s.trim().charAt(1)')).toBe('e');
    expect(run('self.s.trim().replace("l", "L")')).toBe('HeLLo, WorLd');
    expect(run('self.s.trim().replace("l", "L", 1)')).toBe('HeLlo, World');
    expect(run('self.s.trim().split(", ")')).toEqual(['Hello', 'World']);
    expect(run('self.s.trim().substring(0, 5)')).toBe('Hello');
    expect(run('self.s.indexOf("W")')).toBe(9n);
    expect(run('["a", "b"].join("-")')).toBe('a-b');
    expect(run('"abc 123 def 456".find("[0-9]+")')).toBe('123');
    expect(run('"abc 123 def 456".findAll("[0-9]+")')).toEqual(['123', '456']);
    expect(run('"abc 123 def 456".findAll("[0-9]+", 1)')).toEqual(['123']);
  });

  it('URL library', () => {
    expect(run('url("https://user@example.com:8443/a/b?x=1&x=2").getScheme()')).toBe('https');
    expect(run('url("https://example.com:8443/a/b").getHost()')).toBe('example.com:8443');
    expect(run('url("https://example.com:8443/a/b").getHostname()')).toBe('example.com');
    expect(run('url("https://example.com:8443/a/b").getPort()')).toBe('8443');
    expect(run('url("https://example.com/a/b").getEscapedPath()')).toBe('/a/b');
    expect(run('url("https://example.com/?x=1&x=2").getQuery()')).toEqual({ x: ['1', '2'] });
    expect(run('isURL("https://x.io") && !isURL("::not a url")')).toBe(true);
  });

  it('quantity library', () => {
    expect(run('quantity(self.q).isLessThan(quantity("1"))')).toBe(true);
    expect(run('quantity("1Gi").isGreaterThan(quantity("1G"))')).toBe(true);
    expect(run('quantity("1.5").add(quantity("500m")).asInteger()')).toBe(2n);
    expect(run('quantity("1").sub(1).sign()')).toBe(0n);
    expect(run('quantity("2k").compareTo(quantity("2000"))')).toBe(0n);
    expect(run('isQuantity("1Mi") && !isQuantity("1MB")')).toBe(true);
    expect(run('quantity("250m").asApproximateFloat()')).toBe(0.25);
    expect(run('quantity("1.5").isInteger()')).toBe(false);
  });

  it('runtime errors are results, never throws', () => {
    expect(program('self.items[5].n == 1').evaluate({ self }).error).toBeDefined();
    expect(program('[1].min() == 1 && [0][0] / 0 == 1').evaluate({ self }).error).toMatch(/division by zero/);
  });

  it('cost: comprehensions multiply by the list size the caller bounds', () => {
    const unbounded = env.compile('self.items.all(a, self.items.all(b, a.n <= b.n))', () => 1_000_000);
    expect(unbounded.ok).toBe(false);
    const bounded = env.compile('self.items.all(a, self.items.all(b, a.n <= b.n))', (p) =>
      p.at(-1) === 'items' ? 10 : undefined,
    );
    expect(bounded.ok && bounded.program.estimatedCost).toBeLessThan(1000);
    expect(estimateCost({ op: 'value', args: 1 }, () => undefined)).toBe(1);
  });
});
