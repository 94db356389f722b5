/**
 * Container logs from CRI log files (src/agent/runtime/logs.ts), as kubelet reads them
 * (k8s.io/cri-client's logs.go): partial lines joined with what ends them, a container's last
 * words without a newline shown as they are (containerd writes them as a partial line when the
 * process exits mid-line), timestamps once per line, and a follower that sees a line finished in
 * a later write.
 */
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCriLog, writeLogs, type LogOptions } from '../../src/agent/runtime/logs.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-logs-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T1 = '2026-12-07T07:45:06.353722193Z';
const T2 = '2026-12-07T07:45:07.000000001Z';

async function read(path: string, opts: Partial<LogOptions>, running = async () => false): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await writeLogs(
    path,
    { follow: false, timestamps: false, ...opts },
    out,
    running,
    new AbortController().signal,
  );
  return Buffer.concat(chunks).toString('utf8');
}

describe('container logs', () => {
  it('joins partial lines and shows the last one without a newline as it is', async () => {
    const path = join(dir, 'a.log');
    await writeFile(path, `${T1} stdout P hel\n${T1} stdout F lo\n${T2} stdout P abc\n${T2} stdout P def\n`);
    expect(await read(path, {})).toBe('hello\nabcdef');
    expect(await read(path, { timestamps: true })).toBe(`${T1} hello\n${T2} abcdef`);
    expect(await read(path, { tailLines: 1 })).toBe('abcdef');
    expect(decodeCriLog(`${T1} stdout P abc\n`)).toEqual({
      lines: [],
      rest: `${T1} stdout P abc\n`,
      pending: { time: T1, text: 'abc' },
    });
  });

  it('follows a line finished in a later write, and ends with what the container left unfinished', async () => {
    const path = join(dir, 'b.log');
    await writeFile(path, `${T1} stdout P one `);
    let alive = true;
    const reading = read(path, { follow: true }, async () => alive);
    await new Promise((r) => setTimeout(r, 100));
    await appendFile(path, `\n${T1} stdout F two\n${T2} stdout P three`);
    await new Promise((r) => setTimeout(r, 400));
    await appendFile(path, '\n');
    alive = false;
    expect(await reading).toBe('one two\nthree');
  });
});
