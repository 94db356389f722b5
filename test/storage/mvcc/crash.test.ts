/**
 * Crash safety of the LevelDB store: a child process (dist/tools/crash-writer.js) writes with
 * many concurrent writers and is killed with SIGKILL at a random moment, over several cycles.
 * After each kill the store is reopened and checked:
 * - every acknowledged write is present, or superseded by a later write of the same key;
 * - a write that was in flight is either absent or applied whole (its value is one the child
 *   intended for that key, its head entry, version and log record agree);
 * - revisions strictly increase across acknowledgements and restarts;
 * - the watch history from the compacted revision replays to exactly the current state.
 *
 * Cycles: CAPSTAN_CRASH_CYCLES (default 12). Needs `npm run build` first (it runs the built child).
 */
import { spawn } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyValue, Store } from '../../../storage/interface.js';
import { openLevelStore } from '../../../storage/mvcc/index.js';
import { tempDir } from './support.js';

const CHILD = resolve(import.meta.dirname, '../../../dist/tools/crash-writer.js');
const CYCLES = Number(process.env['CAPSTAN_CRASH_CYCLES'] ?? 12);

const digest = (value: Uint8Array): string => createHash('sha256').update(value).digest('hex').slice(0, 16);

interface Ack {
  readonly rev: bigint;
  readonly digest: string;
}

interface CycleOutput {
  readonly ready: bigint;
  readonly acks: { key: string; rev: bigint; digest: string }[];
  readonly intents: { key: string; digest: string }[];
  compactions: number;
}

/** Runs the child until a random moment after it is ready, then SIGKILLs it. */
async function crashCycle(dir: string): Promise<CycleOutput> {
  const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const ready = new Promise<void>((done, fail) => {
    const check = (): void => {
      if (out.includes('\n')) done();
    };
    child.stdout.on('data', check);
    void exited.then(() => fail(new Error(`crash-writer exited before it was ready: ${err}`)));
  });
  await ready;
  await new Promise((r) => setTimeout(r, randomInt(50, 600)));
  child.kill('SIGKILL');
  await exited;
  expect(err).toBe('');
  // Only complete lines count: the kill may cut the last one.
  const lines = out.slice(0, out.lastIndexOf('\n')).split('\n');
  const [first, ...rest] = lines;
  const match = /^ready (\d+)$/.exec(first ?? '');
  if (match === null) throw new Error(`unexpected first line ${JSON.stringify(first)}`);
  const output: CycleOutput = { ready: BigInt(match[1] as string), acks: [], intents: [], compactions: 0 };
  for (const line of rest) {
    const parts = line.split(' ');
    if (parts[0] === 'A')
      output.acks.push({
        key: parts[1] as string,
        rev: BigInt(parts[2] as string),
        digest: parts[3] as string,
      });
    else if (parts[0] === 'I') output.intents.push({ key: parts[1] as string, digest: parts[2] as string });
    else if (parts[0] === 'C') output.compactions++;
  }
  return output;
}

const show = (kv: KeyValue | undefined): string =>
  kv === undefined ? '-' : `${digest(kv.value)}@${kv.modRevision}/${kv.createRevision}`;

/** Replays the history after the compacted revision onto the state at it; returns the result. */
async function replay(
  store: Store,
): Promise<{ state: Map<string, KeyValue>; revisions: bigint[]; keysByRev: Map<bigint, string> }> {
  const compacted = await store.compactedRevision();
  const current = await store.currentRevision();
  const base = compacted > 1n ? compacted : 1n;
  const state = new Map(
    (await store.range({ prefix: '' }, { revision: base })).items.map((kv) => [kv.key, kv]),
  );
  const revisions: bigint[] = [];
  const keysByRev = new Map<bigint, string>();
  if (current > base) {
    const watch = store.watch({ prefix: '' }, { fromRevision: base + 1n });
    for await (const event of watch) {
      if (event.type === 'progress') continue;
      revisions.push(event.revision);
      keysByRev.set(event.revision, event.kv.key);
      // prevKv must be exactly the state before the event.
      expect(show(event.prevKv)).toBe(show(state.get(event.kv.key)));
      if (event.type === 'put') state.set(event.kv.key, event.kv);
      else state.delete(event.kv.key);
      if (event.revision === current) break;
    }
    watch.close();
  }
  return { state, revisions, keysByRev };
}

describe('crash safety (SIGKILL during concurrent writes)', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dir = await tempDir('capstan-crash-');
  });
  afterAll(async () => {
    await dir.remove();
  });

  it('needs the built child', () => {
    expect(existsSync(CHILD), `${CHILD} is missing: run \`npm run build\` before this test`).toBe(true);
  });

  it(
    `keeps every acknowledged write over ${CYCLES} kill cycles`,
    { timeout: 60_000 + CYCLES * 10_000 },
    async () => {
      if (!existsSync(CHILD)) throw new Error(`${CHILD} is missing: run \`npm run build\` before this test`);
      const lastAck = new Map<string, Ack>();
      let highest = 1n;
      let totalAcks = 0;
      let inFlightApplied = 0;
      let compactions = 0;
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const run = await crashCycle(dir.path);
        // Revisions strictly increase: past every earlier cycle, unique within this one.
        expect(run.ready).toBe(highest);
        const seen = new Set<bigint>();
        for (const ack of run.acks) {
          expect(ack.rev).toBeGreaterThan(run.ready);
          expect(seen.has(ack.rev)).toBe(false);
          seen.add(ack.rev);
          const before = lastAck.get(ack.key);
          if (before === undefined || before.rev < ack.rev)
            lastAck.set(ack.key, { rev: ack.rev, digest: ack.digest });
          if (ack.rev > highest) highest = ack.rev;
        }
        totalAcks += run.acks.length;
        compactions += run.compactions;
        const intended = new Map<string, Set<string>>();
        for (const intent of run.intents)
          intended.set(intent.key, (intended.get(intent.key) ?? new Set()).add(intent.digest));

        const store = await openLevelStore(dir.path);
        try {
          const current = await store.currentRevision();
          expect(current).toBeGreaterThanOrEqual(highest);
          const all = await store.range({ prefix: 'crash/' });
          const present = new Map(all.items.map((kv) => [kv.key, kv]));
          for (const key of new Set([...lastAck.keys(), ...present.keys()])) {
            const ack = lastAck.get(key);
            const kv = (await store.get(key)).kv;
            // get (head index) and range (versions) agree.
            expect(show(kv)).toBe(show(present.get(key)));
            const found: Ack =
              kv === undefined ? { rev: 0n, digest: '-' } : { rev: kv.modRevision, digest: digest(kv.value) };
            if (ack !== undefined && kv !== undefined && found.rev === ack.rev) {
              expect(found.digest).toBe(ack.digest);
              continue;
            }
            if (ack === undefined || ack.digest !== '-' || kv !== undefined) {
              // Not the acknowledged state: it must be a later, unacknowledged write, applied whole.
              expect(intended.get(key)?.has(found.digest), `${key}: ${found.digest} was never intended`).toBe(
                true,
              );
              if (kv !== undefined) expect(found.rev).toBeGreaterThan(ack?.rev ?? 0n);
              inFlightApplied++;
            }
            if (kv !== undefined) lastAck.set(key, found);
            else if (ack !== undefined) lastAck.set(key, { rev: current, digest: '-' });
          }
          const history = await replay(store);
          expect([...history.state.values()].map(show).sort()).toEqual(all.items.map(show).sort());
          // One event per revision, contiguous, and every acknowledged write still in history is there.
          const compacted = await store.compactedRevision();
          const base = compacted > 1n ? compacted : 1n;
          expect(history.revisions).toEqual(
            Array.from({ length: Number(current - base) }, (_, i) => base + 1n + BigInt(i)),
          );
          for (const ack of run.acks)
            if (ack.rev > base) expect(history.keysByRev.get(ack.rev)).toBe(ack.key);
          highest = current;
        } finally {
          await store.close();
        }
      }
      console.info(
        `crash test: ${CYCLES} cycles, ${totalAcks} acknowledged writes, ${inFlightApplied} in-flight writes found applied, ${compactions} compactions`,
      );
      // The run must have exercised something.
      expect(totalAcks).toBeGreaterThan(CYCLES);
    },
  );
});
