/**
 * Key order of the store (UTF-8 bytes) without allocating: JavaScript compares strings by UTF-16
 * code units, which agrees with UTF-8 byte order except between surrogates (code points above
 * U+FFFF) and units U+E000..U+FFFF. Remapping those two ranges at the first difference gives code
 * point order, which is UTF-8 byte order. storage's `compareKeys` allocates two Buffers per call,
 * too slow for binary searches over tens of thousands of cached keys.
 */

function fixup(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** Negative, zero or positive as `a` sorts before, with, or after `b` in the store's key order. */
export function compareKeyOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= 0xd800 && y >= 0xd800 ? fixup(x) - fixup(y) : x - y;
  }
  return a.length - b.length;
}

/** A UTF-16 unit at or above U+D800: the only units whose order the remapping changes. */
const HIGH_UNIT = /[\ud800-\uffff]/;

/**
 * The comparison in the store's key order for sorting `keys` and comparing them against others:
 * plain UTF-16 order when none of `keys` has a unit at or above U+D800 (all but a few keys; one
 * side without such units is enough for the two orders to agree at the first difference), which
 * the engine compares natively, several times faster than {@link compareKeyOrder}.
 */
export function keyOrderFor(keys: readonly string[]): (a: string, b: string) => number {
  return keys.some((k) => HIGH_UNIT.test(k)) ? compareKeyOrder : comparePlain;
}

/** `keys` sorted in place by `compare` from {@link keyOrderFor}: plain order by the native sort. */
export function sortKeys(keys: string[], compare: (a: string, b: string) => number): string[] {
  return compare === comparePlain ? keys.sort() : keys.sort(compare);
}

function comparePlain(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
