/**
 * Builds the authentication of a server from its options (kube-apiserver's
 * `BuiltInAuthenticationOptions`): the CA bundles, the token authenticators in kube's order
 * (token file, service accounts, bootstrap tokens, OIDC, webhook), the request authenticator
 * and the identity endpoints. Configuration errors (a malformed token file, an unreadable CA
 * or webhook file, a bad OIDC setting) are thrown as {@link AuthnConfigError} at start.
 */
import { readFileSync } from 'node:fs';
import type { FlagValue } from '../flags/flags.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { BootstrapTokenAuthenticator, type SecretReader } from './bootstrap-token.js';
import { CaBundle, type PemSource } from './ca-bundle.js';
import { OIDC_SIGNING_ALGS, OidcAuthenticator } from './oidc.js';
import { RequestAuthenticator, type RequestHeaderConfig } from './request-authenticator.js';
import { RequestHeaderIdentity } from './request-header.js';
import {
  SELF_SUBJECT_REVIEWS,
  TOKEN_REVIEWS,
  selfSubjectReviewEndpoint,
  tokenReviewEndpoint,
} from './reviews.js';
import type { TokenAuthenticator } from './token-authenticator.js';
import { TokenCache } from './token-cache.js';
import { TokenChain } from './token-chain.js';
import { TokenFileAuthenticator } from './token-file.js';
import { readWebhookConfig } from './webhook-config.js';
import { WebhookTokenAuthenticator } from './webhook-token.js';

/** A flag combination or file that makes authentication unusable (start-up error). */
export class AuthnConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthnConfigError';
  }
}

/** Kube's message when anonymous requests meet the AlwaysAllow authorizer. */
export const ANONYMOUS_ALWAYS_ALLOW_WARNING =
  'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer';

/**
 * The loud start-up warning for a server that lets anonymous requests in while no authorizer
 * restricts anything (undefined when that is not the case): every mode but AlwaysAllow restricts.
 */
export function anonymousExposureWarning(anonymous: boolean, modes: readonly string[]): string | undefined {
  if (!anonymous || modes.some((m) => m !== 'AlwaysAllow')) return undefined;
  return 'WARNING: anonymous requests are enabled and no authorizer restricts them: anyone who can reach this server has full access to its API. Use --anonymous-auth=false or an enforcing --authorization-mode.';
}

/** Kube's cache of token outcomes in front of the token authenticators (webhook aside). */
export const TOKEN_SUCCESS_TTL_MS = 10_000;
export const TOKEN_FAILURE_TTL_MS = 10_000;

/** What authentication is built from. */
export interface AuthnInputs {
  /** Every flag's value by name (`ServerOptions.flags`). */
  readonly flags: ReadonlyMap<string, FlagValue>;
  /** `--anonymous-auth`. */
  readonly anonymousAuth: boolean;
  readonly authorizationModes: readonly string[];
  /** Absolute `--client-ca-file` ('' none). */
  readonly clientCaFile: string;
  /** The cluster CA (Capstan's own), trusted for client certificates. */
  readonly clusterCaPem: string;
  /** Reads `kube-system` Secrets (bootstrap tokens). */
  readonly secrets: SecretReader;
  /** Part B's service-account token authenticator, placed where kube puts it. */
  readonly serviceAccounts?: TokenAuthenticator;
  /** Resolves relative paths of flags. */
  readonly resolvePath: (p: string) => string;
}

/** The built authentication. */
export interface Authentication {
  readonly authenticator: RequestAuthenticator;
  readonly tokens: TokenChain;
  /** `tokenreviews` and `selfsubjectreviews`. */
  readonly endpoints: ReadonlyMap<string, CustomEndpoint>;
  /** CAs for client certificates of users. */
  readonly clientCas: CaBundle;
  /** CAs of the authenticating proxy, if configured. */
  readonly requestHeaderCas: CaBundle | undefined;
  /** Whether anonymous requests are served (after kube's adjustment). */
  readonly anonymous: boolean;
  /** Bootstrap tokens are on (the token cleaner runs). */
  readonly bootstrapTokens: boolean;
  /** Start-up warnings. */
  readonly warnings: readonly string[];
}

function str(flags: ReadonlyMap<string, FlagValue>, name: string): string {
  const v = flags.get(name);
  return typeof v === 'string' ? v : '';
}

function list(flags: ReadonlyMap<string, FlagValue>, name: string): string[] {
  const v = flags.get(name);
  return Array.isArray(v) ? (v as string[]).filter((s) => s !== '') : [];
}

function num(flags: ReadonlyMap<string, FlagValue>, name: string, dflt: number): number {
  const v = flags.get(name);
  return typeof v === 'number' ? v : dflt;
}

function wrap<T>(what: string, build: () => T): T {
  try {
    return build();
  } catch (err) {
    if (err instanceof AuthnConfigError) throw err;
    throw new AuthnConfigError(`${what}: ${(err as Error).message}`, { cause: err });
  }
}

function oidcFrom(inputs: AuthnInputs): OidcAuthenticator | undefined {
  const f = inputs.flags;
  const issuerUrl = str(f, 'oidc-issuer-url');
  const clientId = str(f, 'oidc-client-id');
  if (issuerUrl === '') {
    if (clientId !== '')
      throw new AuthnConfigError('oidc-issuer-url must be specified if oidc-client-id is set');
    return undefined;
  }
  if (clientId === '')
    throw new AuthnConfigError('oidc-client-id must be specified if oidc-issuer-url is set');
  let url: URL;
  try {
    url = new URL(issuerUrl);
  } catch {
    throw new AuthnConfigError(`oidc-issuer-url ${JSON.stringify(issuerUrl)} is not a URL`);
  }
  if (url.protocol !== 'https:')
    throw new AuthnConfigError(`oidc-issuer-url ${JSON.stringify(issuerUrl)}: URL scheme must be https`);
  const algs = list(f, 'oidc-signing-algs');
  for (const a of algs) {
    if (!OIDC_SIGNING_ALGS.includes(a)) {
      throw new AuthnConfigError(
        `oidc-signing-algs: unsupported signing alg ${JSON.stringify(a)}: only ${OIDC_SIGNING_ALGS.join(', ')} are allowed`,
      );
    }
  }
  const caFile = str(f, 'oidc-ca-file');
  const caPem =
    caFile === '' ? undefined : wrap('oidc-ca-file', () => readFileSync(inputs.resolvePath(caFile), 'utf8'));
  const required = f.get('oidc-required-claim');
  return new OidcAuthenticator({
    issuerUrl,
    clientId,
    usernameClaim: str(f, 'oidc-username-claim') || 'sub',
    usernamePrefix: str(f, 'oidc-username-prefix'),
    groupsClaim: str(f, 'oidc-groups-claim'),
    groupsPrefix: str(f, 'oidc-groups-prefix'),
    requiredClaims:
      required !== null && typeof required === 'object' && !Array.isArray(required)
        ? (required as Record<string, string>)
        : {},
    signingAlgs: algs.length > 0 ? algs : ['RS256'],
    ...(caPem === undefined ? {} : { caPem }),
  });
}

function requestHeaderFrom(inputs: AuthnInputs): RequestHeaderConfig | undefined {
  const f = inputs.flags;
  const caFile = str(f, 'requestheader-client-ca-file');
  if (caFile === '') return undefined;
  const usernameHeaders = list(f, 'requestheader-username-headers');
  if (usernameHeaders.length === 0) {
    throw new AuthnConfigError(
      '--requestheader-username-headers must be specified when --requestheader-client-ca-file is set',
    );
  }
  const cas = wrap(
    'requestheader-client-ca-file',
    () => new CaBundle([{ file: inputs.resolvePath(caFile) }]),
  );
  return {
    cas,
    allowedNames: list(f, 'requestheader-allowed-names'),
    identity: new RequestHeaderIdentity({
      usernameHeaders,
      uidHeaders: list(f, 'requestheader-uid-headers'),
      groupHeaders: list(f, 'requestheader-group-headers'),
      extraHeaderPrefixes: list(f, 'requestheader-extra-headers-prefix'),
    }),
  };
}

/**
 * Builds authentication.
 * @throws AuthnConfigError for unusable flags or files.
 */
export function buildAuthentication(inputs: AuthnInputs): Authentication {
  const f = inputs.flags;
  const warnings: string[] = [];
  let anonymous = inputs.anonymousAuth;
  if (anonymous && inputs.authorizationModes.includes('AlwaysAllow')) {
    warnings.push(ANONYMOUS_ALWAYS_ALLOW_WARNING);
    anonymous = false;
  }
  const clientSources: PemSource[] = [{ pem: inputs.clusterCaPem }];
  if (inputs.clientCaFile !== '') clientSources.push({ file: inputs.clientCaFile });
  const clientCas = wrap('client-ca-file', () => new CaBundle(clientSources));

  const authenticators: TokenAuthenticator[] = [];
  const tokenFile = str(f, 'token-auth-file');
  if (tokenFile !== '')
    authenticators.push(
      wrap('token-auth-file', () => TokenFileAuthenticator.read(inputs.resolvePath(tokenFile))),
    );
  if (inputs.serviceAccounts !== undefined) authenticators.push(inputs.serviceAccounts);
  const bootstrapTokens = f.get('enable-bootstrap-token-auth') === true;
  if (bootstrapTokens) authenticators.push(new BootstrapTokenAuthenticator(inputs.secrets));
  const oidc = oidcFrom(inputs);
  if (oidc !== undefined) authenticators.push(oidc);
  const webhookFile = str(f, 'authentication-token-webhook-config-file');
  if (webhookFile !== '') {
    const version = str(f, 'authentication-token-webhook-version') || 'v1beta1';
    if (version !== 'v1' && version !== 'v1beta1') {
      throw new AuthnConfigError(
        `--authentication-token-webhook-version ${JSON.stringify(version)}: must be v1 or v1beta1`,
      );
    }
    const target = wrap('authentication-token-webhook-config-file', () =>
      readWebhookConfig(inputs.resolvePath(webhookFile)),
    );
    authenticators.push(
      new WebhookTokenAuthenticator({
        target,
        version,
        cacheTtlMs: num(f, 'authentication-token-webhook-cache-ttl', 120_000),
      }),
    );
  }
  const apiAudiences = list(f, 'api-audiences');
  const issuers = list(f, 'service-account-issuer');
  const tokens = new TokenChain({
    authenticators,
    // Kube defaults --api-audiences to the first service-account issuer.
    apiAudiences: apiAudiences.length > 0 ? apiAudiences : issuers.slice(0, 1),
    cache: new TokenCache({ successTtlMs: TOKEN_SUCCESS_TTL_MS, failureTtlMs: TOKEN_FAILURE_TTL_MS }),
  });
  const requestHeader = requestHeaderFrom(inputs);
  const authenticator = new RequestAuthenticator({
    anonymous,
    clientCas,
    tokens,
    ...(requestHeader === undefined ? {} : { requestHeader }),
  });
  const endpoints = new Map<string, CustomEndpoint>([
    [TOKEN_REVIEWS, tokenReviewEndpoint(authenticator)],
    [SELF_SUBJECT_REVIEWS, selfSubjectReviewEndpoint()],
  ]);
  return {
    authenticator,
    tokens,
    endpoints,
    clientCas,
    requestHeaderCas: requestHeader?.cas,
    anonymous,
    bootstrapTokens,
    warnings,
  };
}
