/**
 * WatchList's list blueprint (kube v1.33): the initial-events-end bookmark of a
 * `sendInitialEvents=true` watch carries `kubernetes.io/initial-events-list-blueprint`, the empty
 * list of the request's type as the stream's encoder writes it, base64. Checked byte for byte
 * against kube's encodings (JSON with the encoder's newline, protobuf with its envelope and empty
 * ListMeta, PartialObjectMetadataList), served from the watch cache and from storage.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { openWatchStream, readyCache, testCaches, type WatchReader } from './watch.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const WATCH_LIST =
  'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
const BLUEPRINT = 'kubernetes.io/initial-events-list-blueprint';

let s: ResourceApp;
let base: string;
const readers: WatchReader[] = [];

async function start(cached: boolean): Promise<void> {
  const store = await openMemoryStore();
  const caches = cached ? testCaches(store) : undefined;
  s = await startResourceApp({ store, watchCache: caches ?? false, freshnessTimeoutMs: 300 });
  if (caches !== undefined) await readyCache(caches);
  base = await s.listen();
  const r = await s.request(json('POST', CM, { metadata: { name: 'a' } }));
  expect(r.statusCode).toBe(201);
}

afterEach(async () => {
  for (const r of readers.splice(0)) await r.close();
  await s.close();
});

/** The initial-events-end bookmark of a JSON WatchList stream. */
async function endBookmark(accept?: string): Promise<KObj> {
  const w = await openWatchStream(
    base,
    `${CM}?${WATCH_LIST}`,
    accept === undefined ? {} : { headers: { accept } },
  );
  readers.push(w);
  for (;;) {
    const ev = await w.next();
    if (ev === undefined) throw new Error('stream ended before the initial-events-end bookmark');
    if (ev.type === 'BOOKMARK') return ev;
    expect(ev.type).toBe('ADDED');
  }
}

function decoded(bookmark: KObj): string {
  const value = bookmark.object?.metadata.annotations?.[BLUEPRINT];
  expect(value, JSON.stringify(bookmark)).toBeTypeOf('string');
  return Buffer.from(value as string, 'base64').toString('latin1');
}

/** A protobuf length-delimited field (lengths under 128 here). */
function field(tag: number, bytes: Buffer): Buffer {
  expect(bytes.length).toBeLessThan(128);
  return Buffer.concat([Buffer.from([tag, bytes.length]), bytes]);
}

/**
 * What kube's protobuf serializer writes for an empty v1 list: the `k8s\0` magic, then a
 * runtime.Unknown (typeMeta, raw, contentEncoding "", contentType ""); raw is the list with its
 * ListMeta (selfLink, resourceVersion and continue always written, empty) and no items.
 */
function kubeProtobufEmptyList(apiVersion: string, listKind: string): Buffer {
  const typeMeta = Buffer.concat([field(0x0a, Buffer.from(apiVersion)), field(0x12, Buffer.from(listKind))]);
  const listMeta = Buffer.from([0x0a, 0x00, 0x12, 0x00, 0x1a, 0x00]);
  const raw = field(0x0a, listMeta);
  return Buffer.concat([
    Buffer.from('k8s\0', 'latin1'),
    field(0x0a, typeMeta),
    field(0x12, raw),
    Buffer.from([0x1a, 0x00, 0x22, 0x00]),
  ]);
}

describe.each([true, false])('initial-events-end bookmark (watch cache %s)', (cached) => {
  it('JSON: the versioned empty list, kube bytes', async () => {
    await start(cached);
    const end = await endBookmark();
    expect(end.object?.metadata.annotations?.['k8s.io/initial-events-end']).toBe('true');
    expect(Object.keys(end.object?.metadata.annotations ?? {})).toEqual([
      'k8s.io/initial-events-end',
      BLUEPRINT,
    ]);
    expect(decoded(end)).toBe('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":null}\n');
  });

  it('PartialObjectMetadata: the empty PartialObjectMetadataList', async () => {
    await start(cached);
    const end = await endBookmark('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1');
    expect(decoded(end)).toBe(
      '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":null}\n',
    );
  });

  it('protobuf: the enveloped empty list, kube bytes', async () => {
    await start(cached);
    const controller = new AbortController();
    const res = await fetch(`${base}${CM}?${WATCH_LIST}`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toContain('protobuf');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const want = Buffer.from(kubeProtobufEmptyList('v1', 'ConfigMapList').toString('base64'));
    let seen = Buffer.alloc(0);
    // The annotation's value appears verbatim in the bookmark's protobuf frame.
    while (!seen.includes(want) && !seen.includes(Buffer.from('initial-events-end'))) {
      const { value, done } = await reader.read();
      if (done) break;
      seen = Buffer.concat([seen, value]);
    }
    for (let i = 0; i < 5 && !seen.includes(want); i++) {
      const { value, done } = await reader.read();
      if (done) break;
      seen = Buffer.concat([seen, value]);
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(seen.includes(Buffer.from(BLUEPRINT))).toBe(true);
    expect(seen.includes(want)).toBe(true);
  });

  it('no blueprint on other bookmarks or on plain watches', async () => {
    await start(cached);
    const w = await openWatchStream(base, `${CM}?watch=1&allowWatchBookmarks=true&resourceVersion=0`);
    readers.push(w);
    const first = await w.next();
    expect(first?.type).toBe('ADDED');
    expect(JSON.stringify(first)).not.toContain(BLUEPRINT);
  });
});
