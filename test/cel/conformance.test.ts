/**
 * A subset of the cel-spec conformance suite (from @bufbuild/cel-spec) run through Capstan's CEL
 * environment: the suites CRD rules and admission policies rely on, tests that need no
 * bindings, declarations, containers or protobuf messages, and whose expected value is a
 * scalar (or none: expected `true`) or an evaluation error. Each suite must keep at least the
 * pass count measured when this test was written, so a regression in the CEL library or in
 * Capstan's Kubernetes libraries fails here.
 */
import { tests } from '@bufbuild/cel-spec/testdata/conformance.js';
import { describe, expect, it } from 'vitest';
import { CelEnvironment } from '../../src/cel/index.js';

interface Serialized {
  readonly name: string;
  readonly suites?: readonly Serialized[];
  readonly tests?: readonly { readonly original: Record<string, unknown> }[];
}

type Expected = { kind: 'value'; value: unknown } | { kind: 'error' } | { kind: 'skip' };

function expected(t: Record<string, unknown>): Expected {
  if ('evalError' in t) return { kind: 'error' };
  const v = t['value'] as Record<string, unknown> | undefined;
  if (v === undefined) return { kind: 'value', value: true };
  if ('boolValue' in v) return { kind: 'value', value: v['boolValue'] };
  if ('int64Value' in v) return { kind: 'value', value: BigInt(String(v['int64Value'])) };
  if ('stringValue' in v) return { kind: 'value', value: v['stringValue'] };
  if ('doubleValue' in v) return { kind: 'value', value: Number(v['doubleValue']) };
  if ('nullValue' in v) return { kind: 'value', value: null };
  if (Object.keys(v).length === 0) return { kind: 'skip' };
  return { kind: 'skip' };
}

function applicable(t: Record<string, unknown>): boolean {
  return (
    !('bindings' in t) &&
    !('typeEnv' in t) &&
    !('container' in t) &&
    !('disableCheck' in t) &&
    !('checkOnly' in t)
  );
}

/** Runs one conformance test; true when Capstan's environment gives the expected result. */
function passes(t: Record<string, unknown>): boolean | undefined {
  if (!applicable(t)) return undefined;
  const want = expected(t);
  if (want.kind === 'skip') return undefined;
  const env = new CelEnvironment({ variables: {} });
  const compiled = env.compile(String(t['expr']));
  if (!compiled.ok) return want.kind === 'error' ? true : false;
  const r = compiled.program.evaluate({});
  if (want.kind === 'error') return r.error !== undefined;
  if (r.error !== undefined) return false;
  if (typeof want.value === 'number' && typeof r.value === 'number')
    return Number.isNaN(want.value) ? Number.isNaN(r.value) : want.value === r.value;
  return r.value === want.value;
}

/** Suites and the pass counts measured (floor) when this test was written. */
const FLOORS: Readonly<Record<string, number>> = {
  basic: 22,
  comparisons: 284,
  integer_math: 49,
  fp_math: 29,
  lists: 30,
  logic: 21,
  macros: 32,
  string: 47,
  string_ext: 64,
};

const suites = (tests as unknown as Serialized).suites ?? [];

function collect(s: Serialized): Record<string, unknown>[] {
  return [...(s.tests ?? []).map((t) => t.original), ...(s.suites ?? []).flatMap(collect)];
}

describe('cel-spec conformance subset', () => {
  for (const [name, floor] of Object.entries(FLOORS)) {
    it(`${name}: at least ${floor} conformance tests pass`, () => {
      const suite = suites.find((s) => s.name === name);
      expect(suite, name).toBeDefined();
      let pass = 0;
      let run = 0;
      const failed: string[] = [];
      for (const t of collect(suite as Serialized)) {
        const ok = passes(t);
        if (ok === undefined) continue;
        run++;
        if (ok) pass++;
        else failed.push(String(t['expr']));
      }
      if (process.env['CEL_CONFORMANCE_REPORT'] === '1')
        console.log(name, `${pass}/${run}`, failed.slice(0, 40));
      expect(run).toBeGreaterThan(0);
      expect(pass).toBeGreaterThanOrEqual(floor);
    });
  }
});
