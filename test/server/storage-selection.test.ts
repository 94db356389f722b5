/**
 * Which store `capstan server` opens: the embedded LevelDB store in `<data-dir>/store` by default,
 * and with Capstan's own `--storage-backend=memory` a store that writes nothing to disk (what the
 * envtest shim runs, since envtest's data never outlives a run).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerArgs } from '../../src/server/options.js';
import { openStore } from '../../src/server/storage.js';

let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function open(flags: readonly string[]): Promise<{ location: string; files: string[] }> {
  dir = await mkdtemp(join(tmpdir(), 'capstan-storage-'));
  const parsed = parseServerArgs([`--data-dir=${dir}`, ...flags], dir);
  if (parsed.help) throw new Error('unexpected --help');
  const store = await openStore(parsed.options);
  try {
    const put = await store.resources.create('/configmaps/default/a', Buffer.from('{}'));
    const got = await store.resources.get('/configmaps/default/a');
    expect(got.kv?.modRevision).toBe(put.revision);
  } finally {
    await store.root.close();
  }
  return { location: store.location, files: await readdir(dir) };
}

describe('storage selection', () => {
  it('opens the embedded store under the data dir by default', async () => {
    const { location, files } = await open([]);
    expect(location).toBe(join(dir, 'store'));
    expect(files).toEqual(['store']);
  });

  it('--storage-backend=memory keeps objects in memory and writes nothing to the data dir', async () => {
    const { location, files } = await open(['--storage-backend=memory']);
    expect(location).toBe('memory');
    expect(files).toEqual([]);
  });
});
