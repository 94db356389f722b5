/**
 * The pure parts of tools/mix-and-match.ts: its arguments and its table. The tool itself needs
 * kube's reference binaries and is run by hand (docs/mix-and-match.md).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KUBECTL,
  allPassed,
  parseMixArgs,
  renderTable,
  type DirectionId,
  type Outcome,
} from '../../tools/mix-and-match.js';

const pass: Outcome = { pass: true, detail: '', seconds: 1.25 };
const fail: Outcome = { pass: false, detail: 'timed out', seconds: 240 };

describe('mix-and-match arguments', () => {
  it('takes both flag forms, defaults and one direction', () => {
    const a = parseMixArgs(['--kube-bin-dir=/bin/kube', '--direction', 'b', '--timeout-seconds=30']);
    expect(a).toEqual({
      kubeBinDir: '/bin/kube',
      kubectl: DEFAULT_KUBECTL,
      directions: ['b'],
      timeoutSeconds: 30,
      logDir: undefined,
    });
    expect(parseMixArgs(['--kube-bin-dir=/k']).directions).toEqual(['a', 'b']);
  });

  it('refuses what it does not know', () => {
    expect(() => parseMixArgs([])).toThrow(/--kube-bin-dir is required/);
    expect(() => parseMixArgs(['--kube-bin-dir=/k', '--nodes=3'])).toThrow(/unknown flag --nodes/);
    expect(() => parseMixArgs(['--kube-bin-dir=/k', '--direction=c'])).toThrow(/a, b or both/);
    expect(() => parseMixArgs(['--kube-bin-dir=/k', '--timeout-seconds=0'])).toThrow(/positive/);
    expect(() => parseMixArgs(['--kube-bin-dir'])).toThrow(/needs a value/);
    expect(() => parseMixArgs(['stray'])).toThrow(/unexpected argument/);
  });
});

describe('mix-and-match table', () => {
  it('compares the directions per check and lists the failures', () => {
    const results = new Map<DirectionId, Map<string, Outcome>>([
      [
        'a',
        new Map([
          ['x', pass],
          ['y', pass],
        ]),
      ],
      [
        'b',
        new Map([
          ['x', pass],
          ['y', fail],
        ]),
      ],
    ]);
    const table = renderTable(['x', 'y'], results);
    expect(table.split('\n').slice(0, 4)).toEqual([
      '| check | (a) Capstan components on kube-apiserver | (b) kube components on Capstan server | same outcome |',
      '| --- | --- | --- | --- |',
      '| x | pass (1.3 s) | pass (1.3 s) | yes |',
      '| y | pass (1.3 s) | FAIL (240.0 s) | NO |',
    ]);
    expect(table).toContain('- (b) y: timed out');
    expect(allPassed(['x', 'y'], results)).toBe(false);
    expect(allPassed(['x'], results)).toBe(true);
  });

  it('marks a check not run and a single direction', () => {
    const results = new Map<DirectionId, Map<string, Outcome>>([['a', new Map([['x', pass]])]]);
    const table = renderTable(['x', 'z'], results);
    expect(table).toContain('| x | pass (1.3 s) | - |');
    expect(table).toContain('| z | not run | - |');
    expect(allPassed(['x', 'z'], results)).toBe(false);
  });
});
