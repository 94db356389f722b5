/**
 * Plain, comparable shapes of store results, so `toEqual` diffs are readable and do not depend on
 * a backend returning `Buffer` or `Uint8Array`, or carrying extra fields.
 */
import { expect } from 'vitest';
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  InvalidContinueError,
  LeaseNotFoundError,
  NotFoundError,
  RevisionTooLargeError,
  StorageError,
} from '../../../storage/errors.js';
import type { KeyValue, RangeResult, WatchEvent } from '../../../storage/interface.js';

/** A key-value with its value as hex. */
export interface PlainKv {
  key: string;
  value: string;
  createRevision: bigint;
  modRevision: bigint;
  lease: bigint;
}

/** Hex of bytes, whatever view they come in. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** UTF-8 bytes of `text`, as a plain Uint8Array. */
export function bytes(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'utf8'));
}

export function plainKv(kv: KeyValue): PlainKv;
export function plainKv(kv: KeyValue | undefined): PlainKv | undefined;
export function plainKv(kv: KeyValue | undefined): PlainKv | undefined {
  if (kv === undefined) return undefined;
  return {
    key: kv.key,
    value: hex(kv.value),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    lease: kv.lease,
  };
}

/**
 * An event in comparable form. A delete's `kv` keeps only what the contract fixes (key, empty
 * value, mod revision = the delete's revision); its create revision and lease are backend-defined.
 */
export function plainEvent(event: WatchEvent): unknown {
  switch (event.type) {
    case 'progress':
      return { type: 'progress', revision: event.revision };
    case 'put':
      return { type: 'put', revision: event.revision, kv: plainKv(event.kv), prevKv: plainKv(event.prevKv) };
    case 'delete':
      return {
        type: 'delete',
        revision: event.revision,
        kv: { key: event.kv.key, value: hex(event.kv.value), modRevision: event.kv.modRevision },
        prevKv: plainKv(event.prevKv),
      };
  }
}

/** A range result without its opaque token (only whether there is one). */
export function plainRange(
  result: Pick<RangeResult, 'items' | 'revision' | 'count' | 'more'> & { continue?: string },
): unknown {
  return {
    items: result.items.map((kv) => plainKv(kv)),
    revision: result.revision,
    count: result.count,
    more: result.more,
  };
}

/**
 * A storage error in comparable form: its class and the fields the contract fixes. The optional
 * `AlreadyExistsError.current` is left out (checked separately where the backend gives it).
 */
export function plainError(err: unknown): unknown {
  if (err instanceof NotFoundError) return { error: 'NotFoundError', key: err.key };
  if (err instanceof LeaseNotFoundError) return { error: 'LeaseNotFoundError', lease: err.lease };
  if (err instanceof AlreadyExistsError) return { error: 'AlreadyExistsError', key: err.key };
  if (err instanceof ConflictError) {
    return {
      error: 'ConflictError',
      key: err.key,
      expectedModRevision: err.expectedModRevision,
      current: plainKv(err.current),
      revision: err.revision,
    };
  }
  if (err instanceof CompactedError) {
    return {
      error: 'CompactedError',
      requestedRevision: err.requestedRevision,
      compactedRevision: err.compactedRevision,
    };
  }
  if (err instanceof RevisionTooLargeError) {
    return {
      error: 'RevisionTooLargeError',
      requestedRevision: err.requestedRevision,
      currentRevision: err.currentRevision,
    };
  }
  if (err instanceof InvalidContinueError) return { error: 'InvalidContinueError' };
  if (err instanceof StorageError) return { error: err.name, code: err.code };
  return { error: 'not a storage error', detail: String(err) };
}

/** What a call did: its value, or the error it rejected with. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Runs `call` (sync or async) and captures its outcome. */
export async function outcome<T>(call: () => T | Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Awaits `pending`, which must reject with an instance of `type`; checks `fields`; returns the error. */
export async function expectError<E extends Error>(
  pending: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
  fields?: Record<string, unknown>,
): Promise<E> {
  const result = await outcome(() => pending);
  if (result.ok) throw new Error(`expected ${type.name}, but the call succeeded`);
  expect(result.error).toBeInstanceOf(type);
  if (fields !== undefined) expect(result.error).toMatchObject(fields);
  return result.error as E;
}
