import { describe, expect, it } from 'vitest';
import { humanDuration, parseTime, since } from '../../src/table/duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

describe('humanDuration (apimachinery HumanDuration)', () => {
  it.each([
    // clock skew: up to (but excluding) two seconds in the future is "now"
    [-1999, '0s'],
    [-1000, '0s'],
    [-2000, '<invalid>'],
    [-5 * M, '<invalid>'],
    [0, '0s'],
    [999, '0s'],
    [1 * S, '1s'],
    [119 * S + 999, '119s'],
    [2 * M, '2m'],
    [2 * M + 1 * S, '2m1s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M, '10m'],
    [10 * M + 30 * S, '10m'],
    [179 * M + 59 * S, '179m'],
    [3 * H, '3h'],
    [3 * H + 1 * M, '3h1m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H, '8h'],
    [47 * H + 59 * M, '47h'],
    [48 * H, '2d'],
    [2 * D + 1 * H, '2d1h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D, '8d'],
    [729 * D + 23 * H, '729d'],
    [2 * Y, '2y'],
    [2 * Y + 1 * D, '2y1d'],
    [7 * Y + 364 * D, '7y364d'],
    [8 * Y, '8y'],
    [8 * Y + 200 * D, '8y'],
    [100 * Y, '100y'],
  ])('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('since (translateTimestampSince)', () => {
  const now = new Date('2024-05-01T12:00:00Z');

  it('formats the time from the timestamp to now', () => {
    expect(since('2024-05-01T11:55:00Z', now)).toBe('5m');
    expect(since('2024-04-28T12:00:00Z', now)).toBe('3d');
  });

  it('answers <unknown> for the zero time in every stored form', () => {
    for (const zero of [undefined, null, '', '0001-01-01T00:00:00Z', 'not a time', 42]) {
      expect(since(zero, now)).toBe('<unknown>');
    }
  });

  it('parses RFC 3339 with fractional seconds (MicroTime)', () => {
    expect(parseTime('2024-05-01T11:59:58.123456Z')).toBe(Date.parse('2024-05-01T11:59:58.123Z'));
    expect(since('2024-05-01T11:59:58.123456Z', now)).toBe('1s');
  });
});
