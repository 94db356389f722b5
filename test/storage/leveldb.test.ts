/**
 * The conformance suite on the embedded engine over LevelDB in temporary directories, directly and
 * through a prefix, with reopen (close, then open the same directory).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../storage/interface.js';
import { openLevelStore } from '../../storage/mvcc/index.js';
import { prefixed } from '../../storage/prefixed.js';
import { storeSuite, type StoreFactory } from './store.case.js';

/** LevelDB stores in fresh temporary directories, each wrapped by `wrap`. */
function levelFactory(wrap: (store: Store) => Store): StoreFactory {
  const dirs: string[] = [];
  const pathOf = new WeakMap<Store, string>();
  const openAt = async (path: string): Promise<Store> => {
    const store = wrap(await openLevelStore(path));
    pathOf.set(store, path);
    return store;
  };
  return {
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'capstan-leveldb-'));
      dirs.push(dir);
      return openAt(dir);
    },
    async reopen(store) {
      const path = pathOf.get(store);
      if (path === undefined) throw new Error('reopen: not a store of this factory');
      await store.close();
      return openAt(path);
    },
    async cleanup() {
      await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

storeSuite(
  'leveldb store',
  levelFactory((store) => store),
);
storeSuite(
  'leveldb store through prefixed(/registry)',
  levelFactory((store) => prefixed(store, '/registry')),
);
