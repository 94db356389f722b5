/**
 * The continue-token secret shared by every replica on one etcd.
 *
 * A paged list may continue on another replica behind a load balancer, so all replicas must seal
 * tokens with one secret. The first replica to start on an etcd stores a random secret under a
 * fixed key outside any resource prefix (`--etcd-prefix` never applies to it); later ones read
 * it. One transaction does both: create it if absent, else read it back, so two replicas
 * starting together still agree.
 */
import { randomBytes } from 'node:crypto';
import type { KVClient } from 'etcd3';
import { keyBytes, type CallOptions } from './codec.js';
import { EtcdRequestError } from './error-map.js';

/** Where the shared continue-token secret lives in etcd. */
export const CONTINUE_SECRET_KEY = '/capstan.io/continue-token-secret';

const SECRET_BYTES = 32;
const SECRET_KEY = keyBytes(CONTINUE_SECRET_KEY);

/**
 * The shared secret, created if absent.
 * @throws EtcdRequestError when the stored value is too short to be a secret (someone else
 *   wrote the key); client errors as the client throws them (the caller maps them).
 */
export async function loadSharedSecret(kv: KVClient, callOptions: CallOptions): Promise<Uint8Array> {
  const fresh = randomBytes(SECRET_BYTES);
  const res = await kv.txn(
    {
      compare: [{ key: SECRET_KEY, target: 'Create', result: 'Equal', create_revision: '0' }],
      success: [{ request_put: { key: SECRET_KEY, value: fresh } }],
      failure: [{ request_range: { key: SECRET_KEY } }],
    },
    callOptions,
  );
  if (res.succeeded) return fresh;
  const stored = res.responses[0]?.response_range.kvs[0]?.value;
  if (stored === undefined || stored.byteLength < 16) {
    throw new EtcdRequestError(
      'other',
      `etcd: the value at ${CONTINUE_SECRET_KEY} is not a continue-token secret`,
    );
  }
  return stored;
}
