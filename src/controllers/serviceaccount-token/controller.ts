/**
 * The legacy token controller (kube's `pkg/controller/serviceaccount/tokens_controller.go`):
 *
 * - a Secret of type `kubernetes.io/service-account-token` whose
 *   `kubernetes.io/service-account.name` (and, when set, `.uid`) annotation names an existing
 *   ServiceAccount gets data `token` (a legacy JWT, only when it has none), `ca.crt` (the root CA)
 *   and `namespace`, and both annotations; a token Secret whose account does not exist (or has
 *   another uid) is deleted, with a uid precondition;
 * - a deleted ServiceAccount's token Secrets are deleted;
 * - a deleted token Secret is dropped from its account's `secrets` list.
 *
 * Since kube 1.24 no token Secret is created for new accounts. Secrets and accounts each have a
 * queue (`--concurrent-serviceaccount-token-syncs` workers, 5); keys are `namespace/name`.
 */
import type { Secret, ServiceAccount } from '../../api/types/core-v1.js';
import {
  SECRETS,
  SERVICE_ACCOUNTS,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  NAMESPACE_INDEX,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext } from '../context.js';
import { keyOf, splitKey } from '../shared/meta.js';
import type { LegacyTokenSigner } from './jwt.js';
import { startWorkers } from '../shared/workers.js';

/** The Secret type of legacy tokens. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

/** How often a conflicting Secret update is retried with a fresh read (kube: 10). */
const MAX_UPDATE_RETRIES = 10;

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

function isTokenSecret(s: Secret): boolean {
  return s.type === SERVICE_ACCOUNT_TOKEN_TYPE;
}

/** One running token controller. */
export class TokensController {
  readonly #ctx: ControllerContext;
  readonly #signer: LegacyTokenSigner;
  readonly #rootCa: string;
  readonly #secretQueue: WorkQueue<string>;
  readonly #accountQueue: WorkQueue<string>;
  readonly #secrets: SharedInformer<Secret>;
  readonly #accounts: SharedInformer<ServiceAccount>;
  /** Last known token Secrets, by key: a delete must still know its account. */
  readonly #deleted = new Map<string, Secret>();

  constructor(ctx: ControllerContext, signer: LegacyTokenSigner, rootCa: string) {
    this.#ctx = ctx;
    this.#signer = signer;
    this.#rootCa = rootCa;
    this.#secretQueue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter(),
      name: `${ctx.name}-secrets`,
    });
    this.#accountQueue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter(),
      name: `${ctx.name}-serviceaccounts`,
    });
    this.#secrets = ctx.informers.informer<Secret>(SECRETS);
    this.#accounts = ctx.informers.informer<ServiceAccount>(SERVICE_ACCOUNTS);
    const secretSeen = (s: Secret): void => {
      if (isTokenSecret(s)) this.#secretQueue.add(keyOf(s.metadata));
    };
    this.#secrets.addHandler({
      add: secretSeen,
      update: (_, s) => secretSeen(s),
      delete: (s) => {
        if (!isTokenSecret(s)) return;
        this.#deleted.set(keyOf(s.metadata), s);
        this.#secretQueue.add(keyOf(s.metadata));
      },
    });
    this.#accounts.addHandler({ delete: (sa) => this.#accountQueue.add(keyOf(sa.metadata)) });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    const n = concurrency(this.#ctx.config, 'serviceaccount-token', 5);
    startWorkers(
      this.#ctx,
      'token',
      { queue: this.#secretQueue, workers: n, sync: (k) => this.syncSecret(k) },
      { queue: this.#accountQueue, workers: n, sync: (k) => this.syncAccount(k) },
    );
  }

  /** A deleted account: its token Secrets go too. */
  async syncAccount(key: string): Promise<void> {
    if (this.#accounts.store.get(key) !== undefined) return;
    const { namespace, name } = splitKey(key);
    try {
      await this.#ctx.client.resource<ServiceAccount>(SERVICE_ACCOUNTS).get(name, { namespace });
      return; // recreated meanwhile
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    for (const s of this.#secrets.store.byIndex(NAMESPACE_INDEX, namespace)) {
      if (!isTokenSecret(s) || s.metadata.annotations?.[SA_NAME_ANNOTATION] !== name) continue;
      await this.#deleteSecret(s);
    }
  }

  /** Fills, or deletes, one token Secret (see the module comment). */
  async syncSecret(key: string): Promise<void> {
    const secret = this.#secrets.store.get(key);
    if (secret === undefined) {
      const last = this.#deleted.get(key);
      this.#deleted.delete(key);
      if (last !== undefined) await this.#dropReference(last);
      return;
    }
    if (!isTokenSecret(secret) || secret.metadata.deletionTimestamp !== undefined) return;
    const sa = await this.#accountOf(secret);
    if (sa === undefined) {
      await this.#deleteSecret(secret);
      return;
    }
    await this.#fill(key, sa);
  }

  /** The account the Secret names (cache, then the server), or undefined (missing, other uid). */
  async #accountOf(secret: Secret): Promise<ServiceAccount | undefined> {
    const ns = secret.metadata.namespace ?? '';
    const name = secret.metadata.annotations?.[SA_NAME_ANNOTATION] ?? '';
    const uid = secret.metadata.annotations?.[SA_UID_ANNOTATION] ?? '';
    if (name === '') return undefined;
    let sa = this.#accounts.store.get(`${ns}/${name}`);
    if (sa === undefined) {
      try {
        sa = await this.#ctx.client.resource<ServiceAccount>(SERVICE_ACCOUNTS).get(name, { namespace: ns });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    return uid !== '' && uid !== sa.metadata.uid ? undefined : sa;
  }

  async #fill(key: string, sa: ServiceAccount): Promise<void> {
    const { namespace, name } = splitKey(key);
    const client = this.#ctx.client.resource<Secret>(SECRETS);
    let live = this.#secrets.store.get(key);
    for (let attempt = 0; attempt < MAX_UPDATE_RETRIES && live !== undefined; attempt++) {
      const ann = live.metadata.annotations ?? {};
      // Changed to name another account meanwhile: its own sync handles it.
      if (ann[SA_NAME_ANNOTATION] !== sa.metadata.name) return;
      const uid = ann[SA_UID_ANNOTATION] ?? '';
      if (uid !== '' && uid !== sa.metadata.uid) return;
      const data = { ...(live.data ?? {}) };
      const needsToken = (data['token'] ?? '') === '';
      const needsCa = this.#rootCa !== '' && data['ca.crt'] !== b64(this.#rootCa);
      const needsNamespace = data['namespace'] !== b64(namespace);
      if (!needsToken && !needsCa && !needsNamespace && uid !== '') return;
      if (needsToken) {
        data['token'] = b64(
          this.#signer.token(namespace, sa.metadata.name ?? '', sa.metadata.uid ?? '', name),
        );
      }
      if (needsCa) data['ca.crt'] = b64(this.#rootCa);
      if (needsNamespace) data['namespace'] = b64(namespace);
      try {
        await client.update(
          {
            ...live,
            metadata: {
              ...live.metadata,
              annotations: {
                ...ann,
                [SA_NAME_ANNOTATION]: sa.metadata.name ?? '',
                [SA_UID_ANNOTATION]: sa.metadata.uid ?? '',
              },
            },
            data,
          },
          { namespace },
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err)) throw err;
      }
      try {
        live = await client.get(name, { namespace });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    }
  }

  async #deleteSecret(s: Secret): Promise<void> {
    try {
      await this.#ctx.client.resource<Secret>(SECRETS).delete(s.metadata.name ?? '', {
        namespace: s.metadata.namespace ?? '',
        preconditions: { uid: s.metadata.uid ?? '' },
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }

  /** Removes a deleted Secret from its account's `secrets` list, if it is there. */
  async #dropReference(secret: Secret): Promise<void> {
    const ns = secret.metadata.namespace ?? '';
    const saName = secret.metadata.annotations?.[SA_NAME_ANNOTATION] ?? '';
    const sa = this.#accounts.store.get(`${ns}/${saName}`);
    if (sa === undefined) return;
    const uid = secret.metadata.annotations?.[SA_UID_ANNOTATION] ?? '';
    if (uid !== '' && uid !== sa.metadata.uid) return;
    const refs = sa.secrets ?? [];
    const kept = refs.filter((r) => r.name !== secret.metadata.name);
    if (kept.length === refs.length) return;
    try {
      await this.#ctx.client
        .resource<ServiceAccount>(SERVICE_ACCOUNTS)
        .update({ ...sa, secrets: kept }, { namespace: ns });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
