/**
 * Service accounts in one server, wired from the flags (flags.ts), the keys (keys.ts) and the
 * cluster CA: the token authenticator for the authentication step, the TokenRequest endpoint,
 * the pod admission step and the issuer discovery routes. (Default accounts, the root CA per
 * namespace and legacy token Secrets are the controller manager's serviceaccount,
 * root-ca-cert-publisher and serviceaccount-token controllers.) Built before the resource layer; `attach` hands it
 * the resource context once `mountResources` has made it (lookups need its store and caches).
 */
import type { FastifyInstance } from 'fastify';
import type { CustomEndpoint } from '../http/resource-routes.js';
import type { ResourceContext } from '../resource/context.js';
import type { AdmissionPlugin } from '../admission/index.js';
import { ServiceAccountAuthenticator } from '../serviceaccount/authenticator.js';
import type { ServiceAccountFlags } from '../serviceaccount/flags.js';
import { TokenIssuer } from '../serviceaccount/issuer.js';
import type { ServiceAccountKeys } from '../serviceaccount/keys.js';
import { ObjectLookup, type ObjectGetter } from '../serviceaccount/lookup.js';
import { installOpenIdRoutes } from '../serviceaccount/openid.js';
import { serviceAccountAdmission } from '../serviceaccount/pod-admission.js';
import { tokenRequestEndpoint } from '../serviceaccount/token-request.js';

/** What the wiring is built from. */
export interface ServiceAccountDeps {
  readonly flags: ServiceAccountFlags;
  readonly keys: ServiceAccountKeys;
  /** `host:port` clients reach the server at (for the default `jwks_uri`). */
  readonly externalAddress: () => string;
}

/** The service-account parts of a server. */
export class ServiceAccounts {
  readonly authenticator: ServiceAccountAuthenticator;
  readonly admission: AdmissionPlugin;
  /** Custom endpoints by key (`/serviceaccounts/token`); empty when no key signs. */
  readonly endpoints: ReadonlyMap<string, CustomEndpoint>;
  readonly #deps: ServiceAccountDeps;
  readonly #lookup: DeferredLookup;

  constructor(deps: ServiceAccountDeps) {
    this.#deps = deps;
    const lookup = new DeferredLookup();
    this.#lookup = lookup;
    const { flags, keys } = deps;
    this.authenticator = new ServiceAccountAuthenticator({
      keys: keys.verifying,
      issuers: flags.issuers,
      apiAudiences: flags.apiAudiences,
      lookup: flags.lookup,
      objects: lookup.proxy,
    });
    this.admission = serviceAccountAdmission(lookup.proxy);
    const endpoints = new Map<string, CustomEndpoint>();
    const first = flags.issuers[0] ?? '';
    if (keys.signing !== undefined) {
      const boundIssuer = new TokenIssuer(keys.signing, first);
      endpoints.set(
        '/serviceaccounts/token',
        tokenRequestEndpoint({
          issuer: boundIssuer,
          objects: lookup.proxy,
          apiAudiences: flags.apiAudiences,
          maxExpirationSeconds: flags.maxTokenExpirationSeconds,
          extendExpiration: flags.extendTokenExpiration,
        }),
      );
    }
    this.endpoints = endpoints;
  }

  /** Gives the lookups the resource context (call right after `mountResources`). */
  attach(ctx: ResourceContext): void {
    this.#lookup.attach(new ObjectLookup(ctx));
  }

  /** The issuer discovery routes. */
  installRoutes(app: FastifyInstance): void {
    installOpenIdRoutes(app, {
      issuer: this.#deps.flags.issuers[0] ?? '',
      jwksUri: this.#deps.flags.jwksUri,
      externalAddress: this.#deps.externalAddress,
      keys: this.#deps.keys.verifying,
    });
  }
}

/** An {@link ObjectLookup} that exists once the resource context does. */
class DeferredLookup {
  #inner: ObjectLookup | undefined;
  readonly proxy: ObjectGetter;

  constructor() {
    this.proxy = {
      get: (kind, namespace, name) => {
        if (this.#inner === undefined) {
          return Promise.reject(new Error('service account lookups before the resource layer exists'));
        }
        return this.#inner.get(kind, namespace, name);
      },
    };
  }

  attach(lookup: ObjectLookup): void {
    this.#inner = lookup;
  }
}
