/**
 * The `token-cleaner-controller` (alias `tokencleaner`, off unless named, as in kube), kube's
 * `pkg/controller/bootstrap/tokencleaner.go`: a Secret of type `bootstrap.kubernetes.io/token`
 * in `kube-system` whose data `expiration` (RFC 3339) has passed is deleted, with a uid
 * precondition; one not expired yet is looked at again when it expires. An expiration that does
 * not parse counts as expired; a Secret without one never expires.
 */
import type { Secret } from '../../api/types/core-v1.js';
import {
  SECRETS,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { keyOf, splitKey } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';

/** The Secret type of bootstrap tokens. */
export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
/** Where bootstrap tokens live. */
export const BOOTSTRAP_NAMESPACE = 'kube-system';

/** A bootstrap token Secret's `data[key]`, decoded ('' when absent). */
export function tokenData(secret: Secret, key: string): string {
  const raw = secret.data?.[key];
  return raw === undefined ? '' : Buffer.from(raw, 'base64').toString('utf8');
}

/**
 * Milliseconds until `secret` expires: 0 when it has (or its expiration does not parse), -1 when
 * it never does (kube's `GetExpiration`).
 */
export function msUntilExpiry(secret: Secret, now: number): number {
  const value = tokenData(secret, 'expiration');
  if (value === '') return -1;
  // RFC 3339 with a zone, as Go's time.RFC3339 parses.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return 0;
  const at = Date.parse(value);
  if (!Number.isFinite(at)) return 0;
  return at <= now ? 0 : at - now;
}

/** One running token cleaner. */
export class TokenCleaner {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #secrets: SharedInformer<Secret>;
  readonly #now: () => number;

  constructor(ctx: ControllerContext, now: () => number = Date.now) {
    this.#ctx = ctx;
    this.#now = now;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#secrets = ctx.informers.informer<Secret>(SECRETS);
    const seen = (s: Secret): void => {
      if (s.metadata.namespace === BOOTSTRAP_NAMESPACE && s.type === BOOTSTRAP_TOKEN_TYPE) {
        this.#queue.add(keyOf(s.metadata));
      }
    };
    this.#secrets.addHandler({ add: seen, update: (_, s) => seen(s) });
  }

  /** Starts the worker once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'token cleaner', { queue: this.#queue, workers: 1, sync: (k) => this.sync(k) });
  }

  /** Deletes the Secret if it has expired, else looks again when it will have. */
  async sync(key: string): Promise<void> {
    const secret = this.#secrets.store.get(key);
    if (secret === undefined || secret.type !== BOOTSTRAP_TOKEN_TYPE) return;
    const left = msUntilExpiry(secret, this.#now());
    if (left < 0) return;
    if (left > 0) {
      this.#queue.addAfter(key, left);
      return;
    }
    const { namespace, name } = splitKey(key);
    try {
      await this.#ctx.client
        .resource<Secret>(SECRETS)
        .delete(name, { namespace, preconditions: { uid: secret.metadata.uid ?? '' } });
      this.#ctx.log.info(`deleted expired bootstrap token Secret ${key}`);
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

/** Registry entry. */
export const tokenCleanerController: ControllerDescriptor = {
  name: 'token-cleaner-controller',
  aliases: ['tokencleaner'],
  serviceAccount: 'token-cleaner',
  disabledByDefault: true,
  start(ctx) {
    new TokenCleaner(ctx).start();
  },
};
