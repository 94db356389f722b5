/**
 * `--controllers` parsing (kube-controller-manager's syntax), the selection `capstan server` and
 * `capstan controller-manager` share.
 */
import { describe, expect, it } from 'vitest';
import { parseControllerSelection, type KnownController } from '../../src/flags/controllers.js';
import { FlagError } from '../../src/flags/flags.js';
import { parseServerArgs } from '../../src/server/options.js';
import { SERVER_CONTROLLERS } from '../../src/server/controllers.js';

const KNOWN: readonly KnownController[] = [
  { name: 'a-controller', aliases: ['a'] },
  { name: 'b-controller', aliases: ['b'] },
  { name: 'off-controller', aliases: ['off'], disabledByDefault: true },
];

const on = (value: string | readonly string[]): string[] => [...parseControllerSelection(value, KNOWN).names];

describe('parseControllerSelection', () => {
  it('runs what is on by default for *, nothing for an empty value', () => {
    expect(on('*')).toEqual(['a-controller', 'b-controller']);
    expect(on('')).toEqual([]);
    expect(on([])).toEqual([]);
  });

  it('turns controllers on and off by name or alias', () => {
    expect(on('*,-a')).toEqual(['b-controller']);
    expect(on('-a-controller,*')).toEqual(['b-controller']);
    expect(on('a')).toEqual(['a-controller']);
    expect(on('*,off')).toEqual(['a-controller', 'b-controller', 'off-controller']);
    expect(on(['off', 'b-controller'])).toEqual(['b-controller', 'off-controller']);
  });

  it('lets the first entry naming a controller decide, as kube does', () => {
    expect(on('a,-a')).toEqual(['a-controller']);
    expect(on('-a,a,*')).toEqual(['b-controller']);
  });

  it('answers enabled() for canonical names and aliases', () => {
    const s = parseControllerSelection('*,-b', KNOWN);
    expect(s.enabled('a')).toBe(true);
    expect(s.enabled('a-controller')).toBe(true);
    expect(s.enabled('b')).toBe(false);
    expect(s.enabled('off-controller')).toBe(false);
    expect(() => s.enabled('nope')).toThrow(/nope/);
  });

  it('refuses unknown names, with or without a dash, naming each', () => {
    expect(() => on('*,bogus,-other')).toThrow(FlagError);
    expect(() => on('*,bogus,-other')).toThrow(
      '--controllers: "bogus" is not in the list of known controllers; "other" is not in the list of known controllers',
    );
  });
});

describe('capstan server --controllers', () => {
  const parse = (...argv: string[]) => {
    const p = parseServerArgs(argv);
    if (p.help) throw new Error('help');
    return p.options.controllers;
  };

  it('defaults to every server controller not disabled by default', () => {
    expect(parse().names).toEqual(
      SERVER_CONTROLLERS.filter((c) => c.disabledByDefault !== true).map((c) => c.name),
    );
  });

  it('runs none for an empty value and accepts kube names', () => {
    expect(parse('--controllers=').names).toEqual([]);
    const s = parse('--controllers=*,-serviceaccount,-root-ca-certificate-publisher-controller');
    expect(s.enabled('serviceaccount-controller')).toBe(false);
    expect(s.enabled('root-ca-certificate-publisher-controller')).toBe(false);
    expect(s.enabled('namespace')).toBe(true);
    expect(parse('--controllers=', '--controllers=namespace').names).toEqual(['namespace-controller']);
  });

  it('is a flag error for unknown controllers', () => {
    // (deployment is known: the in-process controller manager runs it.)
    expect(() => parse('--controllers=*,no-such-controller')).toThrow(
      /"no-such-controller" is not in the list of known controllers/,
    );
    expect(parse('--controllers=deployment').names).toEqual(['deployment-controller']);
  });
});
