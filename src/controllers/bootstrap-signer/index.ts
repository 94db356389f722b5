/**
 * The `bootstrap-signer-controller` (alias `bootstrapsigner`, off unless named, as in kube),
 * kube's `pkg/controller/bootstrap/bootstrapsigner.go`: the ConfigMap `cluster-info` in
 * `kube-public` carries, for every bootstrap token allowed to sign, the key
 * `jws-kubeconfig-<token id>` holding the detached JWS of its `kubeconfig` value
 * (`./jws.ts`), so a joining node holding the token can trust the kubeconfig it reads
 * anonymously.
 *
 * A token qualifies when its Secret in `kube-system` has type `bootstrap.kubernetes.io/token`,
 * the name `bootstrap-token-<id>` with `token-id` equal to that `<id>`, a non-empty
 * `token-secret`, `usage-bootstrap-signing` = `true`, and has not expired (an unparseable
 * expiration counts as expired). Every change to such a Secret, and every add or update of
 * `cluster-info`, queues the one key; the sync recomputes all signatures, drops those of tokens
 * that no longer qualify, and updates the ConfigMap only when a signature changed, appeared or
 * went away. A ConfigMap without `kubeconfig` is left alone. As in kube, a conflict or a
 * vanished ConfigMap is not retried (the change that caused it queues the key again), and a
 * token is not re-examined when it expires: its deletion by the token cleaner re-signs.
 */
import type { ConfigMap, Secret } from '../../api/types/core-v1.js';
import {
  CONFIG_MAPS,
  SECRETS,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { startWorkers } from '../shared/workers.js';
import {
  BOOTSTRAP_NAMESPACE,
  BOOTSTRAP_TOKEN_TYPE,
  msUntilExpiry,
  tokenData,
} from '../token-cleaner/index.js';
import { computeDetachedSignature } from './jws.js';

/** Where the signed ConfigMap lives, and its name. */
export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
/** The signed key of `cluster-info`. */
export const KUBECONFIG_KEY = 'kubeconfig';
/** The prefix of the signature keys (followed by the token id). */
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

const SECRET_NAME = /^bootstrap-token-([a-z0-9]{6})$/;

/**
 * The token id and secret of `secret` when it may sign now (kube's `validateSecretForSigning`),
 * else undefined.
 */
export function signingToken(secret: Secret, now: number): { id: string; secret: string } | undefined {
  const match = SECRET_NAME.exec(secret.metadata.name ?? '');
  const id = tokenData(secret, 'token-id');
  if (match === null || id === '' || id !== match[1]) return undefined;
  const tokenSecret = tokenData(secret, 'token-secret');
  if (tokenSecret === '' || msUntilExpiry(secret, now) === 0) return undefined;
  if (tokenData(secret, 'usage-bootstrap-signing') !== 'true') return undefined;
  return { id, secret: tokenSecret };
}

/**
 * The `data` `cm` should have given `tokens` (id → secret), or undefined when it needs no
 * update (or has nothing to sign).
 */
export function signedData(
  cm: ConfigMap,
  tokens: ReadonlyMap<string, string>,
): Record<string, string> | undefined {
  const content = cm.data?.[KUBECONFIG_KEY];
  if (content === undefined) return undefined;
  const data: Record<string, string> = {};
  const old = new Map<string, string>();
  for (const [k, v] of Object.entries(cm.data ?? {})) {
    if (k.startsWith(JWS_KEY_PREFIX)) old.set(k.slice(JWS_KEY_PREFIX.length), v);
    else data[k] = v;
  }
  let changed = false;
  for (const [id, secret] of tokens) {
    const sig = computeDetachedSignature(content, id, secret);
    if (old.get(id) !== sig) changed = true;
    old.delete(id);
    data[JWS_KEY_PREFIX + id] = sig;
  }
  return changed || old.size > 0 ? data : undefined;
}

/** One running signer. */
export class BootstrapSigner {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #secrets: SharedInformer<Secret>;
  readonly #configMaps: SharedInformer<ConfigMap>;
  readonly #key = `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#secrets = ctx.informers.informer<Secret>(SECRETS);
    this.#configMaps = ctx.informers.informer<ConfigMap>(CONFIG_MAPS);
    const poke = (): void => this.#queue.add(this.#key);
    const cmSeen = (cm: ConfigMap): void => {
      if (cm.metadata.namespace === CLUSTER_INFO_NAMESPACE && cm.metadata.name === CLUSTER_INFO_NAME) poke();
    };
    this.#configMaps.addHandler({ add: cmSeen, update: (_, cm) => cmSeen(cm) });
    const secretSeen = (s: Secret): void => {
      if (s.metadata.namespace === BOOTSTRAP_NAMESPACE && s.type === BOOTSTRAP_TOKEN_TYPE) poke();
    };
    this.#secrets.addHandler({ add: secretSeen, update: (_, s) => secretSeen(s), delete: secretSeen });
  }

  /** Starts the worker once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'bootstrap signer', { queue: this.#queue, workers: 1, sync: () => this.sync() });
  }

  /** The tokens that may sign now, by id (the first Secret of an id wins, as in kube). */
  #tokens(): Map<string, string> {
    const now = Date.now();
    const tokens = new Map<string, string>();
    const secrets = this.#secrets.store
      .list()
      .filter((s) => s.metadata.namespace === BOOTSTRAP_NAMESPACE && s.type === BOOTSTRAP_TOKEN_TYPE);
    for (const s of secrets) {
      const token = signingToken(s, now);
      if (token !== undefined && !tokens.has(token.id)) tokens.set(token.id, token.secret);
    }
    return tokens;
  }

  /** Re-signs `cluster-info` if its signatures are not those of the current tokens. */
  async sync(): Promise<void> {
    const cm = this.#configMaps.store.get(this.#key);
    if (cm === undefined) return;
    const data = signedData(cm, this.#tokens());
    if (data === undefined) return;
    try {
      await this.#ctx.client
        .resource<ConfigMap>(CONFIG_MAPS)
        .update({ ...cm, data }, { namespace: CLUSTER_INFO_NAMESPACE });
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return;
      throw err;
    }
  }
}

/** Registry entry. */
export const bootstrapSignerController: ControllerDescriptor = {
  name: 'bootstrap-signer-controller',
  aliases: ['bootstrapsigner'],
  serviceAccount: 'bootstrap-signer',
  disabledByDefault: true,
  start(ctx) {
    new BootstrapSigner(ctx).start();
  },
};
