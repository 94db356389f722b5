/**
 * How a watcher turns events into bytes on its stream. The default is JSON lines built from the
 * stored bytes of each version. Another representation (protobuf frames, Table rows) plugs in as a
 * {@link WatchFrames} whose `object` encodes through the version's per-format cache
 * (`ObjectVersion.encoded`), so each version is still encoded once per format.
 */
import { jsonFrame, jsonVersionFrame, type WatchEventType } from './cache-event.js';
import type { ObjectVersion } from './object-version.js';

/** A synthesized object of a frame (a bookmark). */
export interface FrameValue {
  readonly kind: string;
  readonly apiVersion: string;
  readonly metadata: Record<string, unknown>;
}

/** Encoders of one watch stream's frames. */
export interface WatchFrames {
  /** A frame carrying an object version. */
  object(type: WatchEventType, version: ObjectVersion): Uint8Array;
  /** A frame carrying a synthesized object (bookmarks). */
  value(type: WatchEventType, value: FrameValue): Uint8Array;
}

/** JSON lines, each from a version's stored bytes (no parse, no encode). */
export const JSON_FRAMES: WatchFrames = {
  object: (type, version: ObjectVersion) => jsonVersionFrame(type, version),
  value: (type, value) => jsonFrame(type, Buffer.from(JSON.stringify(value))),
};
