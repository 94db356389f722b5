/**
 * A throwaway local etcd cluster of several members (three by default) on loopback, for failover
 * tests: each member is its own `/usr/bin/etcd` process with its own data directory, ports and
 * name, and can be stopped (SIGTERM: a routine stop), killed (SIGKILL: a crash) and started again
 * on its data.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, Member, type Ports } from './etcd-local.js';

/** One member of a {@link LocalEtcdCluster}. */
export interface ClusterMember {
  readonly name: string;
  readonly endpoint: string;
  readonly pid: number;
  /** Ends the process with `signal` (SIGTERM by default), keeping its data. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts the process again on its data; resolves once the member is healthy. */
  start(): Promise<void>;
}

/** A running local cluster. */
export interface LocalEtcdCluster {
  readonly endpoints: string[];
  readonly members: readonly ClusterMember[];
  /** Stops every member and removes the data. Idempotent. */
  close(): Promise<void>;
}

/**
 * `count` distinct free ports. Each `pick` closes its listener before the next, so the kernel may
 * hand the same port out twice (a cluster with two members on one port fails at start with
 * "has duplicate url"): a repeat is picked again.
 */
export async function distinctFreePorts(
  count: number,
  pick: () => Promise<number> = freePort,
): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count; tries++) {
    if (tries >= count * 20) throw new Error(`no ${count} distinct free ports after ${tries} tries`);
    ports.add(await pick());
  }
  return [...ports];
}

/** Starts an `n`-member cluster and resolves once every member is healthy. */
export async function startEtcdCluster(n = 3): Promise<LocalEtcdCluster> {
  const root = await mkdtemp(join(tmpdir(), 'capstan-etcd-cluster-'));
  const names = Array.from({ length: n }, (_, i) => `m${i}`);
  const free = await distinctFreePorts(2 * n);
  const ports: Ports[] = names.map((_, i) => ({
    client: free[2 * i] as number,
    peer: free[2 * i + 1] as number,
  }));
  const initialCluster = names.map((name, i) => `${name}=http://127.0.0.1:${ports[i]?.peer}`).join(',');
  const slots = names.map(
    (name, i) =>
      new Member(join(root, name), ports[i] as Ports, {
        name,
        initialCluster,
        extraArgs: ['--initial-cluster-token=capstan-test-cluster'],
      }),
  );
  try {
    // A member is healthy only once the cluster has a leader, so all must start together.
    await Promise.all(slots.map((m) => m.start()));
  } catch (err) {
    await Promise.all(slots.map((m) => m.terminate('SIGKILL')));
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  let closed = false;
  return {
    endpoints: slots.map((m) => m.endpoint),
    members: slots.map((m, i) => ({
      name: names[i] as string,
      endpoint: m.endpoint,
      get pid() {
        return m.pid;
      },
      stop: (signal = 'SIGTERM') => m.terminate(signal),
      start: () => m.start(),
    })),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(slots.map((m) => m.terminate('SIGTERM')));
      await rm(root, { recursive: true, force: true });
    },
  };
}
