/**
 * The etcd v3 backend of the storage engine: {@link openEtcdStore} connects to an etcd cluster
 * through the `etcd3` client and returns a {@link Store} whose revisions are etcd's.
 *
 * Decisions, each explained where it is made:
 * - writes are compare-guarded transactions whose failure branch reads the key (`writes.ts`);
 *   the client's automatic retries are off, reads are retried by the store, writes never
 *   (`options.ts`, `store.ts`);
 * - watches use raw etcd watch streams, one per watch, resumed from the last delivered revision;
 *   requested progress is double-checked on etcd versions that answer it out of order
 *   (`watch.ts`, `watch-progress.ts`, `server-version.ts`);
 * - the compacted revision is found by a short search of reads, since etcd does not report it
 *   (`compaction.ts`);
 * - the continue-token secret lives once in etcd, outside any resource prefix (`secret.ts`).
 *
 * - ranges and write transactions go over plain HTTP/2 gRPC calls, not the etcd3 client's call
 *   stack, which cost as much CPU as the rest of a request (`kv-channel.ts`);
 *
 * Files: `store.ts` (the Store), `writes.ts`, `kv-channel.ts`, `watch.ts` + `watch-progress.ts` + `event-queue.ts`,
 * `compaction.ts`, `codec.ts` (wire shapes), `error-map.ts` (client errors → storage errors),
 * `host-gate.ts` (member failover), `options.ts`, `secret.ts`, `server-version.ts`.
 *
 * @example
 * ```ts
 * const store = await openEtcdStore({ endpoints: ['https://10.0.0.1:2379'], tls: { caFile, certFile, keyFile } });
 * const { revision } = await store.create('/registry/pods/default/a', bytes);
 * ```
 */
import { Etcd3 } from 'etcd3';
import { UnavailableError } from '../errors.js';
import type { Store } from '../interface.js';
import { isTransient, toStoreError } from './error-map.js';
import { HostGates } from './host-gate.js';
import { KvChannel } from './kv-channel.js';
import { clientOptions, readTls, resolveOptions, type EtcdStoreOptions } from './options.js';
import { loadSharedSecret } from './secret.js';
import { progressIsOrdered } from './server-version.js';
import { EtcdStore } from './store.js';

export type { EtcdStoreOptions, EtcdTlsOptions } from './options.js';
export { EtcdRequestError, type EtcdRequestErrorReason } from './error-map.js';
export { CONTINUE_SECRET_KEY } from './secret.js';

/**
 * Connects to etcd and returns a ready store. It waits for etcd for up to
 * `options.dialTimeoutMs` (etcd may still be starting), then loads the shared continue-token
 * secret and reads the server version. On an etcd that has no secret yet (and without
 * `options.continueSecret`), opening writes it: one key, {@link CONTINUE_SECRET_KEY}, at one
 * revision. With `continueSecret`, opening writes nothing.
 *
 * @throws RangeError for invalid options.
 * @throws UnavailableError when etcd cannot be reached within the dial timeout.
 * @throws EtcdRequestError when etcd refuses the client (permissions, a foreign value at the
 *   continue-token secret key).
 */
export async function openEtcdStore(options: EtcdStoreOptions): Promise<Store> {
  const resolved = resolveOptions(options);
  const tls = await readTls(options);
  const client = new Etcd3(clientOptions(options, tls));
  // Reads, writes and watches skip the etcd3/grpc-js call stack (see kv-channel.ts).
  const kv = new KvChannel(options.endpoints, tls, new HostGates(options.endpoints.length));
  try {
    const deadline = Date.now() + resolved.dialTimeoutMs;
    const callOptions = () => ({ deadline: Math.min(deadline, Date.now() + resolved.requestTimeoutMs) });
    const continueSecret = await untilDeadline(deadline, () =>
      resolved.continueSecret === undefined
        ? loadSharedSecret(client.kv, callOptions())
        : client.kv
            .range({ key: Buffer.from([0]), count_only: true }, callOptions())
            .then(() => resolved.continueSecret as Uint8Array),
    );
    // The version only tunes how far requested progress answers are trusted; unknown = cautious.
    const version = await client.maintenance.status(callOptions()).then(
      (status) => status.version,
      () => undefined,
    );
    const store = new EtcdStore({
      client,
      kv,
      options: resolved,
      continueSecret,
      progressOrdered: progressIsOrdered(version),
    });
    await store.currentRevision();
    return store;
  } catch (err) {
    client.close();
    kv.close();
    throw toStoreError(err, 'connect');
  }
}

/** Runs `attempt` until it succeeds, fails for good, or `deadline` (ms) passes. */
async function untilDeadline<T>(deadline: number, attempt: () => Promise<T>): Promise<T> {
  let pause = 50;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err)) throw err;
      if (Date.now() + pause >= deadline)
        throw new UnavailableError('etcd: cannot connect before the dial timeout', { cause: err });
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 1_000);
    }
  }
}
