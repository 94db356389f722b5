/**
 * What every store wrapper that changes values (the storage codec's transcoding store, the
 * encrypting store) does to what the wrapped store hands back: watch events and the `current`
 * value that `AlreadyExistsError` and `ConflictError` carry go out through the same mapping as
 * reads, so callers never see the inner form.
 */
import { AlreadyExistsError, ConflictError } from './errors.js';
import type { KeyValue, WatchEvent } from './interface.js';

/** Maps one stored key-value to the caller's form. */
export type KeyValueMapping = (kv: KeyValue) => KeyValue;

/**
 * `event` with its values mapped: `kv` through `out`, `prevKv` through `outPrevious` (a wrapper
 * may map previous values lazily, as most watchers never read them).
 */
export function mapWatchEvent(
  event: WatchEvent,
  out: KeyValueMapping,
  outPrevious: KeyValueMapping = out,
): WatchEvent {
  switch (event.type) {
    case 'progress':
      return event;
    case 'put':
      return {
        ...event,
        kv: out(event.kv),
        prevKv: event.prevKv === undefined ? undefined : outPrevious(event.prevKv),
      };
    case 'delete':
      return { ...event, prevKv: outPrevious(event.prevKv) };
  }
}

/** Awaits `pending`; a conflict's or an existing key's `current` value is rethrown mapped. */
export async function mapStoreErrors<T>(pending: Promise<T>, out: KeyValueMapping): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof AlreadyExistsError && err.current !== undefined) {
      throw new AlreadyExistsError(err.key, out(err.current));
    }
    if (err instanceof ConflictError && err.current !== undefined) {
      throw new ConflictError(err.key, err.expectedModRevision, out(err.current), err.revision);
    }
    throw err;
  }
}
