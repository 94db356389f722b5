/**
 * The APF flags: `--enable-priority-and-fairness` (default true) makes the two max-in-flight
 * flags the server's concurrency limit, which must then be positive (a flag error, exit 2);
 * with APF off, zero means "no limit" as before.
 */
import { describe, expect, it } from 'vitest';
import { FlagError } from '../../src/flags/flags.js';
import { parseServerArgs, type ServerOptions } from '../../src/server/options.js';

function options(argv: readonly string[]): ServerOptions {
  const parsed = parseServerArgs(argv);
  if (parsed.help) throw new Error('unexpected --help');
  return parsed.options;
}

const zero = ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'];

describe('--enable-priority-and-fairness', () => {
  it('defaults to true and refuses a concurrency limit of zero', () => {
    expect(options([]).flags.get('enable-priority-and-fairness')).toBe(true);
    expect(() => parseServerArgs(zero)).toThrow(FlagError);
    expect(() => parseServerArgs(zero)).toThrow(
      '--max-requests-inflight plus --max-mutating-requests-inflight must be positive when --enable-priority-and-fairness is true',
    );
    expect(
      options(['--max-requests-inflight=0', '--max-mutating-requests-inflight=1']).maxRequestsInflight,
    ).toBe(0);
  });

  it('leaves zero limits (no limit) to the max-in-flight filter when off', () => {
    const off = options([...zero, '--enable-priority-and-fairness=false']);
    expect(off.flags.get('enable-priority-and-fairness')).toBe(false);
    expect(off.maxRequestsInflight).toBe(0);
  });
});
