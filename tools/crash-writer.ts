/**
 * Crash-test child for the embedded LevelDB store (test/storage/mvcc/crash.test.ts).
 *
 * Usage: `node dist/tools/crash-writer.js <dir> [writers=32] [keysPerWriter=8]`
 *
 * Opens the store in `<dir>` and runs concurrent writers until killed. Each writer owns its keys
 * (`crash/w<writer>/k<n>`) and has one write in flight at a time: creates, compare-guarded
 * updates, and deletes, with random values. A compactor keeps the last 200 revisions. Lines on
 * stdout, each written synchronously (so a line in the pipe means the event happened):
 *
 * - `ready <revision>`: the store is open at `<revision>`
 * - `I <key> <digest>`: a write of the key is about to be submitted (`-` for a delete)
 * - `A <key> <revision> <digest>`: that write was acknowledged (durable) at `<revision>`
 * - `C <revision>`: a compaction at `<revision>` was acknowledged
 *
 * `<digest>` is the first 16 hex digits of the value's SHA-256. Exit: 0 after a safety timeout
 * (the parent normally kills it first), 1 on an error (printed to stderr).
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { writeSync } from 'node:fs';
import type { Store } from '../storage/interface.js';
import { openLevelStore } from '../storage/mvcc/index.js';

/** Ends the child even if the parent forgot it. */
const SAFETY_TIMEOUT_MS = 120_000;

function digest(value: Uint8Array): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}

function emit(line: string): void {
  writeSync(1, `${line}\n`);
}

async function writer(store: Store, id: number, keys: number, known: Map<string, bigint>): Promise<never> {
  for (;;) {
    const key = `crash/w${id}/k${randomInt(keys)}`;
    const modRevision = known.get(key);
    if (modRevision !== undefined && randomInt(10) < 3) {
      emit(`I ${key} -`);
      const result = await store.delete(key, { ifModRevision: modRevision });
      known.delete(key);
      emit(`A ${key} ${result.revision} -`);
    } else {
      const value = randomBytes(randomInt(3000));
      const sum = digest(value);
      emit(`I ${key} ${sum}`);
      const result =
        modRevision === undefined
          ? await store.create(key, value)
          : await store.update(key, value, { ifModRevision: modRevision });
      known.set(key, result.revision);
      emit(`A ${key} ${result.revision} ${sum}`);
    }
  }
}

/** Compacts every few tens of milliseconds, keeping the last 200 revisions. */
async function compactor(store: Store): Promise<never> {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 40));
    const target = (await store.currentRevision()) - 200n;
    if (target > 1n) {
      await store.compact(target);
      emit(`C ${target}`);
    }
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [dir, writersArg, keysArg] = argv;
  if (dir === undefined) {
    process.stderr.write('usage: crash-writer <dir> [writers] [keysPerWriter]\n');
    return 2;
  }
  const writers = Number(writersArg ?? 32);
  const keys = Number(keysArg ?? 8);
  setTimeout(() => process.exit(0), SAFETY_TIMEOUT_MS).unref();
  const store = await openLevelStore(dir);
  const known = new Map<string, bigint>();
  for (const kv of (await store.range({ prefix: 'crash/' })).items) known.set(kv.key, kv.modRevision);
  emit(`ready ${await store.currentRevision()}`);
  await Promise.all([
    compactor(store),
    ...Array.from({ length: writers }, (_, id) => writer(store, id, keys, known)),
  ]);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `crash-writer: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
