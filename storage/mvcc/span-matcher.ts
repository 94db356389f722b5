/**
 * Span membership tests for the watch hot path, without encoding keys to bytes.
 *
 * `spanContains` from continue-token.ts allocates two Buffers per comparison; a watcher tests
 * every event's key, so this module compares UTF-16 strings directly in UTF-8 byte order.
 */
import type { KeySpan } from '../interface.js';

/**
 * Compares two strings in UTF-8 byte order (code point order). UTF-16 code units already sort
 * that way except that surrogates (0xD800–0xDFFF, code points ≥ 0x10000) must sort above the
 * units 0xE000–0xFFFF; lone surrogates are compared as their code units.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xs = x >= 0xd800 && x <= 0xdfff;
      const ys = y >= 0xd800 && y <= 0xdfff;
      if (xs && !ys && y >= 0xe000) return 1;
      if (ys && !xs && x >= 0xe000) return -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

/** A predicate telling whether a key lies in `span`. */
export function spanMatcher(span: KeySpan): (key: string) => boolean {
  if ('prefix' in span) {
    const prefix = span.prefix;
    if (prefix === '') return () => true;
    // A string prefix is a UTF-8 byte prefix too (UTF-8 encodes code points independently).
    return (key) => key.startsWith(prefix);
  }
  const { start, end } = span;
  return (key) => compareUtf8(key, start) >= 0 && compareUtf8(key, end) < 0;
}
