/**
 * A change as the watch cache keeps it, and the JSON watch frame around an object's bytes. A
 * frame is `{"type":"T","object":<object bytes>}\n`; each watcher builds its frames from the
 * version's stored bytes with the resourceVersion spliced in, in one copy. Events are not given a
 * frame of their own to keep: the window holds every event for a while, and a kept frame doubled
 * what each one held.
 */
import { resourceVersionParts, withResourceVersion } from '../api/object.js';
import type { ObjectVersion } from './object-version.js';

/** Watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const PREFIX: Record<WatchEventType, Buffer> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
  BOOKMARK: Buffer.from('{"type":"BOOKMARK","object":'),
  ERROR: Buffer.from('{"type":"ERROR","object":'),
};
const SUFFIX = Buffer.from('}\n');

/** One JSON watch frame around a version's stored bytes at its revision. */
export function jsonVersionFrame(type: WatchEventType, version: ObjectVersion): Buffer {
  const parts = resourceVersionParts(version.value, version.revision) ?? [
    withResourceVersion(version.value, version.revision),
  ];
  return Buffer.concat([PREFIX[type], ...parts, SUFFIX]);
}

/** One JSON watch frame around already encoded object bytes. */
export function jsonFrame(type: WatchEventType, object: Uint8Array): Buffer {
  const prefix = PREFIX[type];
  const out = Buffer.allocUnsafe(prefix.length + object.byteLength + SUFFIX.length);
  prefix.copy(out, 0);
  out.set(object, prefix.length);
  SUFFIX.copy(out, prefix.length + object.byteLength);
  return out;
}

/** A put or delete of one key, in revision order. */
export class CacheEvent {
  readonly type: 'put' | 'delete';
  readonly revision: bigint;
  /**
   * put: the new version. delete: the deleted value shown at the delete's revision (what a
   * DELETED event carries).
   */
  readonly object: ObjectVersion;
  /** The version before this change (undefined when a put created the key). */
  readonly prev: ObjectVersion | undefined;
  /** When the cache saw it (ms since the epoch), for the window's time bound. */
  readonly at: number;
  #leaving: ObjectVersion | undefined;

  constructor(
    type: 'put' | 'delete',
    revision: bigint,
    object: ObjectVersion,
    prev: ObjectVersion | undefined,
    at: number,
  ) {
    this.type = type;
    this.revision = revision;
    this.object = object;
    this.prev = prev;
    this.at = at;
  }

  get key(): string {
    return this.object.key;
  }

  /** The type a watcher without selectors sees. */
  get naturalType(): WatchEventType {
    return this.type === 'delete' ? 'DELETED' : this.prev === undefined ? 'ADDED' : 'MODIFIED';
  }

  /**
   * What a watcher whose selection the object leaves with this put is sent as DELETED: the
   * previous (selected) state at this event's revision, made once for all such watchers.
   */
  leaving(): ObjectVersion | undefined {
    if (this.type !== 'put' || this.prev === undefined) return undefined;
    return (this.#leaving ??= this.prev.at(this.revision));
  }
}
