/**
 * `--authorization-mode=Webhook` with `--authorization-webhook-config-file` (kubeconfig format:
 * the first cluster's `server` and CA, the first user's client certificate or token): each
 * decision is a SubjectAccessReview (`--authorization-webhook-version` v1beta1 or v1) POSTed to
 * the service. `status.allowed` allows, `status.denied` denies, anything else is no opinion.
 * Answers are cached by the review's spec for `--authorization-webhook-cache-authorized-ttl` and
 * `-unauthorized-ttl`. A failed call (after one retry) is no opinion with an error: when nothing
 * else allows the request, it fails with 500, as kube-apiserver answers. The same authorizer
 * serves each `Webhook` entry of `--authorization-config`, with that entry's timeout, caches,
 * failure policy (`Deny`: a failed call ends the chain) and connection (a kubeconfig file, or the
 * in-cluster service account), and its `matchConditions`: CEL on the SubjectAccessReview v1 spec,
 * run before the call; one false skips the webhook (no opinion), an error is decided by the
 * failure policy as a failed call is.
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import type { AuthorizationConditions } from '../cel/authorization.js';
import type { Attributes } from './attributes.js';
import {
  NO_OPINION,
  unlistedRules,
  type Authorization,
  type Authorizer,
  type RulesInfo,
} from './authorizer.js';

/** Options of {@link WebhookAuthorizer}. */
export interface WebhookOptions {
  /** The kubeconfig file ('' with `inCluster`). */
  readonly configFile: string;
  /** Connect as a pod does (KUBERNETES_SERVICE_HOST/PORT and the service account's files). */
  readonly inCluster?: boolean;
  /** Cache allowed / not allowed answers (default true; a TTL of 0 also disables). */
  readonly cacheAuthorized?: boolean;
  readonly cacheUnauthorized?: boolean;
  /** What a failed call decides: no opinion (default, the legacy flags' behaviour) or deny. */
  readonly failurePolicy?: 'NoOpinion' | 'Deny';
  /** `v1beta1` (default) or `v1`. */
  readonly version: string;
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
  /** Per-call timeout (ms, default 30 000 as kube's). */
  readonly timeoutMs?: number;
  /** `matchConditions` of an `--authorization-config` webhook; undefined: always asked. */
  readonly matchConditions?: AuthorizationConditions;
  readonly now?: () => number;
}

interface Target {
  readonly url: URL;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  readonly insecure: boolean;
}

/** The config file is unusable. */
export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookConfigError';
  }
}

type Json = Record<string, unknown>;
function obj(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
}

function readTarget(path: string): Target {
  let doc: Json;
  try {
    doc = obj(parse(readFileSync(path, 'utf8')));
  } catch (err) {
    throw new WebhookConfigError(`--authorization-webhook-config-file ${path}: ${(err as Error).message}`);
  }
  const base = dirname(path);
  const cluster = obj(obj((doc['clusters'] as unknown[] | undefined)?.[0])['cluster']);
  const user = obj(obj((doc['users'] as unknown[] | undefined)?.[0])['user']);
  const server = cluster['server'];
  if (typeof server !== 'string' || server === '') {
    throw new WebhookConfigError(`--authorization-webhook-config-file ${path}: no cluster server`);
  }
  const pem = (data: unknown, file: unknown): string | undefined => {
    if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
    if (typeof file === 'string' && file !== '') return readFileSync(resolve(base, file), 'utf8');
    return undefined;
  };
  const ca = pem(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = pem(user['client-certificate-data'], user['client-certificate']);
  const key = pem(user['client-key-data'], user['client-key']);
  const token = typeof user['token'] === 'string' ? user['token'] : undefined;
  return {
    url: new URL(server),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(token === undefined ? {} : { token }),
  };
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The in-cluster connection (client-go's rest.InClusterConfig). */
function inClusterTarget(env: NodeJS.ProcessEnv = process.env): Target {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new WebhookConfigError(
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  }
  let token: string;
  let ca: string;
  try {
    token = readFileSync(`${SERVICE_ACCOUNT_DIR}/token`, 'utf8').trim();
    ca = readFileSync(`${SERVICE_ACCOUNT_DIR}/ca.crt`, 'utf8');
  } catch (err) {
    throw new WebhookConfigError(`unable to load in-cluster configuration: ${(err as Error).message}`);
  }
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { url: new URL(`https://${hostPart}:${port}`), insecure: false, token, ca };
}

interface Cached {
  readonly answer: Authorization;
  readonly expires: number;
}

/** The webhook authorizer. */
export class WebhookAuthorizer implements Authorizer {
  readonly name = 'Webhook';

  /** A webhook cannot list rules; kube says so. */
  rulesFor(): RulesInfo {
    return unlistedRules('webhook authorizer does not support user rule resolution');
  }
  readonly #target: Target;
  readonly #o: WebhookOptions;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();

  constructor(options: WebhookOptions) {
    if (options.version !== 'v1' && options.version !== 'v1beta1') {
      throw new WebhookConfigError(
        `--authorization-webhook-version: unsupported version ${JSON.stringify(options.version)}: supported versions are v1, v1beta1`,
      );
    }
    this.#o = options;
    this.#target = options.inCluster === true ? inClusterTarget() : readTarget(options.configFile);
    this.#now = options.now ?? Date.now;
  }

  async authorize(attrs: Attributes): Promise<Authorization> {
    const conditions = this.#o.matchConditions;
    if (conditions !== undefined && !conditions.empty) {
      const outcome = conditions.evaluate(specOf(attrs, 'v1'));
      if ('error' in outcome) {
        const decision = this.#o.failurePolicy === 'Deny' ? 'deny' : 'noOpinion';
        return { decision, reason: '', evaluationError: outcome.error, failed: outcome.error };
      }
      if (!outcome.matches) return NO_OPINION;
    }
    const spec = specOf(attrs, this.#o.version);
    const key = JSON.stringify(spec);
    const now = this.#now();
    const hit = this.#cache.get(key);
    if (hit !== undefined && hit.expires > now) return hit.answer;
    let status: Json;
    try {
      status = await this.#call(spec).catch(() => this.#call(spec));
    } catch (err) {
      const message = `error contacting webhook: ${(err as Error).message}`;
      const decision = this.#o.failurePolicy === 'Deny' ? 'deny' : 'noOpinion';
      return { decision, reason: '', evaluationError: message, failed: message };
    }
    const reason = typeof status['reason'] === 'string' ? status['reason'] : '';
    const answer: Authorization =
      status['allowed'] === true
        ? { decision: 'allow', reason }
        : status['denied'] === true
          ? { decision: 'deny', reason }
          : { decision: 'noOpinion', reason };
    const allowed = answer.decision === 'allow';
    const ttl = allowed ? this.#o.authorizedTtlMs : this.#o.unauthorizedTtlMs;
    const caching = (allowed ? this.#o.cacheAuthorized : this.#o.cacheUnauthorized) !== false;
    if (caching && ttl > 0) {
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(key, { answer, expires: now + ttl });
    }
    return answer;
  }

  #call(spec: Json): Promise<Json> {
    const t = this.#target;
    const body = JSON.stringify({
      apiVersion: `authorization.k8s.io/${this.#o.version}`,
      kind: 'SubjectAccessReview',
      spec,
    });
    const https = t.url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise((resolvePromise, reject) => {
      const req = send(
        t.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...(t.token === undefined ? {} : { authorization: `Bearer ${t.token}` }),
          },
          timeout: this.#o.timeoutMs ?? 30_000,
          ...(https
            ? {
                ...(t.ca === undefined ? {} : { ca: t.ca }),
                ...(t.cert === undefined ? {} : { cert: t.cert }),
                ...(t.key === undefined ? {} : { key: t.key }),
                rejectUnauthorized: !t.insecure,
              }
            : {}),
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            if (code < 200 || code >= 300) {
              reject(new Error(`the webhook answered ${code}`));
              return;
            }
            try {
              resolvePromise(obj(obj(JSON.parse(text))['status']));
            } catch (err) {
              reject(err instanceof Error ? err : new Error(String(err)));
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** The SubjectAccessReview spec of `attrs` (v1beta1 names the groups field `group`). */
function specOf(attrs: Attributes, version: string): Json {
  const u = attrs.user;
  return {
    ...(attrs.isResourceRequest
      ? {
          resourceAttributes: {
            namespace: attrs.namespace,
            verb: attrs.verb,
            group: attrs.apiGroup,
            version: attrs.apiVersion,
            resource: attrs.resource,
            subresource: attrs.subresource,
            name: attrs.name,
          },
        }
      : { nonResourceAttributes: { path: attrs.path, verb: attrs.verb } }),
    user: u.name,
    [version === 'v1' ? 'groups' : 'group']: u.groups,
    ...(Object.keys(u.extra).length === 0 ? {} : { extra: u.extra }),
    ...(u.uid === '' ? {} : { uid: u.uid }),
  };
}
