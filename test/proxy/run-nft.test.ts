/**
 * `runNft` against a command that exits without reading its input: the outcome is the exit
 * status, and the broken pipe on stdin is no uncaught error (it used to end the whole process,
 * seen as an uncaught `write EPIPE` while the network suite ran).
 */
import { describe, expect, it } from 'vitest';
import { runNft } from '../../src/proxy/proxier.js';

describe('runNft', () => {
  it('reports the exit status of a command that never reads its input, and nothing escapes', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => {
      uncaught.push(err);
    };
    process.on('uncaughtException', onUncaught);
    try {
      // Far more than a pipe holds, so the write meets the closed pipe.
      const input = 'add table inet x\n'.repeat(200_000);
      await expect(runNft(['sh', '-c', 'exit 3', 'nft'], input)).rejects.toThrow(/exited 3/);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  });
});
