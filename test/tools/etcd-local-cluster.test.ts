/** The local etcd cluster's ports: distinct even when the kernel hands one out twice. */
import { describe, expect, it } from 'vitest';
import { distinctFreePorts } from '../../tools/etcd-local-cluster.js';

describe('distinctFreePorts', () => {
  it('picks again when a port repeats', async () => {
    const handed = [40001, 40002, 40001, 40003, 40002, 40004];
    let i = 0;
    const ports = await distinctFreePorts(4, () => Promise.resolve(handed[i++] as number));
    expect(ports).toEqual([40001, 40002, 40003, 40004]);
    expect(i).toBe(6);
  });

  it('gives up when it cannot find enough', async () => {
    await expect(distinctFreePorts(2, () => Promise.resolve(40001))).rejects.toThrow(
      /no 2 distinct free ports/,
    );
  });

  it('finds real ones', async () => {
    const ports = await distinctFreePorts(6);
    expect(new Set(ports).size).toBe(6);
  });
});
