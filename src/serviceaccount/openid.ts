/**
 * Service-account issuer discovery (kube's `ServiceAccountIssuerDiscovery`):
 * `/.well-known/openid-configuration` (`application/json`) and `/openid/v1/jwks`
 * (`application/jwk-set+json`), both `Cache-Control: public, max-age=3600`, so that relying
 * parties (cloud IAM, Vault, another cluster) verify service-account tokens offline.
 *
 * As in kube, they are served only when the first `--service-account-issuer` is an `https` URL;
 * `jwks_uri` is `--service-account-jwks-uri`, or `https://<external address>/openid/v1/jwks`.
 * The documents are built once (the keys are fixed for the server's life).
 */
import type { FastifyInstance } from 'fastify';
import { loadJose } from '../authn/jose.js';
import type { VerificationKey } from './keys.js';

/** Paths of the documents. */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

const CACHE_CONTROL = 'public, max-age=3600';

/** What the documents say. */
export interface OpenIdOptions {
  /** The first `--service-account-issuer`. */
  readonly issuer: string;
  /** `--service-account-jwks-uri` ('' for the default). */
  readonly jwksUri: string;
  /** `host:port` of the server as clients reach it (known once listening). */
  readonly externalAddress: () => string;
  readonly keys: readonly VerificationKey[];
}

/** True when kube would serve discovery for `issuer`. */
export function servesDiscovery(issuer: string): boolean {
  try {
    return new URL(issuer).protocol === 'https:';
  } catch {
    return false;
  }
}

/** The JWKS document of `keys`. */
export async function jwksDocument(keys: readonly VerificationKey[]): Promise<{ keys: object[] }> {
  const { exportJWK } = await loadJose();
  const out: object[] = [];
  for (const k of keys) {
    const jwk = await exportJWK(k.publicKey);
    out.push({ use: 'sig', ...jwk, kid: k.kid, alg: k.alg });
  }
  return { keys: out };
}

/** Installs the two routes on `app` (nothing when the issuer is not an https URL). */
export function installOpenIdRoutes(app: FastifyInstance, options: OpenIdOptions): void {
  if (!servesDiscovery(options.issuer)) return;
  let jwks: Promise<string> | undefined;
  let config: string | undefined;
  const algs = [...new Set(options.keys.map((k) => k.alg))].sort();
  app.get(OPENID_CONFIGURATION_PATH, async (_request, reply) => {
    config ??= JSON.stringify({
      issuer: options.issuer,
      jwks_uri: options.jwksUri !== '' ? options.jwksUri : `https://${options.externalAddress()}${JWKS_PATH}`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: algs,
    });
    return reply.header('cache-control', CACHE_CONTROL).type('application/json').send(config);
  });
  app.get(JWKS_PATH, async (_request, reply) => {
    jwks ??= jwksDocument(options.keys).then((d) => JSON.stringify(d));
    const body = await jwks;
    return reply.header('cache-control', CACHE_CONTROL).type('application/jwk-set+json').send(body);
  });
}
