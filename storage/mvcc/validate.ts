/**
 * Argument checks of the public methods. Violations are programming errors (TypeError), not
 * storage outcomes, so they are not StorageErrors.
 */

/** A surrogate without its partner: it has no UTF-8 form, so the key could not round-trip. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Keys are non-empty, well-formed strings (their UTF-8 form must decode back to them). */
export function assertKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError('key must be a non-empty string');
  if (LONE_SURROGATE.test(key)) throw new TypeError('key must be well-formed Unicode');
}

/** Revisions are bigints (a number would compare but not encode). */
export function assertRevision(revision: bigint): void {
  if (typeof revision !== 'bigint') throw new TypeError('revision must be a bigint');
}

/** Values are byte arrays (Buffer or Uint8Array). */
export function assertValue(value: Uint8Array): void {
  if (!(value instanceof Uint8Array)) throw new TypeError('value must be a Uint8Array');
}
