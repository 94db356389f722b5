/**
 * The allocation checkpoint (src/agent/pod/allocation-checkpoint.ts): what one agent run writes,
 * the next reads; pods removed go; a damaged file is an empty checkpoint, never a crash.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AllocationCheckpoint, CHECKPOINT_FILE } from '../../src/agent/pod/allocation-checkpoint.js';

describe('allocation checkpoint', () => {
  const dirs: string[] = [];
  const file = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-alloc-'));
    dirs.push(dir);
    return join(dir, 'nested', CHECKPOINT_FILE);
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('gives a new agent run what the last one allocated, containers without resources included', () => {
    const path = file();
    const first = new AllocationCheckpoint(path);
    first.set(
      'u1',
      new Map([
        ['c', { requests: { cpu: '100m' } }],
        ['none', undefined],
      ]),
    );
    first.set('u2', new Map([['c', { limits: { memory: '64Mi' } }]]));
    first.delete('u2');
    const next = new AllocationCheckpoint(path);
    expect(next.get('u1')).toEqual(
      new Map([
        ['c', { requests: { cpu: '100m' } }],
        ['none', undefined],
      ]),
    );
    expect(next.get('u2')).toBeUndefined();
    next.set('u3', new Map([['c', {}]]));
    next.retain(new Set(['u3']));
    expect(new AllocationCheckpoint(path).get('u1')).toBeUndefined();
    expect(new AllocationCheckpoint(path).get('u3')).toEqual(new Map([['c', {}]]));
  });

  it('starts empty from a damaged file, and writes a whole one on the next change', () => {
    const path = file();
    new AllocationCheckpoint(path).set('u1', new Map([['c', undefined]]));
    writeFileSync(path, '{"version":1,"pods":{"u1":');
    const damaged = new AllocationCheckpoint(path);
    expect(damaged.get('u1')).toBeUndefined();
    damaged.set('u2', new Map([['c', { requests: { cpu: '1' } }]]));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      version: 1,
      pods: { u2: { c: { requests: { cpu: '1' } } } },
    });
  });
});
