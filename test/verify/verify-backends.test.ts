/**
 * `capstan verify --in-process` on the other backends: a short run passes on LevelDB (a
 * temporary data dir) and on a local etcd (Debian's etcd-server; required under CI=true).
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runVerifyCommand, type VerifyIo } from '../../src/verify/command.js';
import { ETCD_BINARY, startEtcd, type LocalEtcd } from '../../tools/etcd-local.js';

async function verify(args: readonly string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const io: VerifyIo = { out: (t) => (out += t), err: () => undefined, tty: false };
  return { code: await runVerifyCommand(args, io), out };
}

const haveEtcd = existsSync(ETCD_BINARY);
const requireEtcd = process.env['CI'] === 'true' || process.env['CAPSTAN_REQUIRE_ETCD'] === '1';
let etcd: LocalEtcd | undefined;
afterAll(async () => {
  await etcd?.stop();
});

describe('capstan verify --in-process on LevelDB and etcd', () => {
  it('passes on LevelDB', async () => {
    const r = await verify(['--in-process=leveldb', '--runs=15', '--seed=11', '--only=writes,lists,watch']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('runs 15 ');
  }, 60_000);

  it.runIf(haveEtcd || requireEtcd)(
    'passes on etcd',
    async () => {
      etcd = await startEtcd();
      const url = etcd.endpoints[0] ?? '';
      const r = await verify([`--in-process=${url}`, '--runs=15', '--seed=12', '--only=writes,lists,watch']);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain(`in-process Capstan on ${url}`);
    },
    60_000,
  );
});
