/**
 * The service-account flags of `capstan server`, validated with kube-apiserver's rules:
 * `--service-account-issuer` (repeatable, no duplicates, a value with a colon must be a URL;
 * default `https://kubernetes.default.svc.cluster.local`, where kube-apiserver requires the flag),
 * `--api-audiences` (default: the issuers), `--service-account-jwks-uri` (an https URL),
 * `--service-account-max-token-expiration` (0, or between 1 hour and 2^32 seconds), the key files,
 * `--service-account-lookup` and `--service-account-extend-token-expiration`.
 */
import { FlagError, type FlagValue } from '../flags/flags.js';

/** The issuer when none is given (what kubeadm and kind configure). */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** Validated service-account settings. */
export interface ServiceAccountFlags {
  /** Absolute paths. */
  readonly keyFiles: readonly string[];
  /** Absolute path, or ''. */
  readonly signingKeyFile: string;
  /** Never empty; the first issues. */
  readonly issuers: readonly string[];
  /** Never empty. */
  readonly apiAudiences: readonly string[];
  readonly jwksUri: string;
  readonly lookup: boolean;
  /** 0: no limit. */
  readonly maxTokenExpirationSeconds: number;
  readonly extendTokenExpiration: boolean;
}

/**
 * Reads and validates the flags.
 * @param resolvePath makes a flag's path absolute ('' stays '').
 * @throws FlagError on a value kube-apiserver refuses.
 */
export function parseServiceAccountFlags(
  values: ReadonlyMap<string, FlagValue>,
  resolvePath: (p: string) => string,
): ServiceAccountFlags {
  const list = (name: string): string[] =>
    ((values.get(name) as readonly string[] | undefined) ?? []).filter((s) => s !== '');
  const issuers = list('service-account-issuer');
  const seen = new Set<string>();
  for (const issuer of issuers) {
    if (seen.has(issuer))
      throw new FlagError(`service-account-issuer ${JSON.stringify(issuer)} specified more than once`);
    seen.add(issuer);
    if (issuer.includes(':')) {
      try {
        new URL(issuer);
      } catch {
        throw new FlagError(
          `service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL`,
        );
      }
    }
  }
  if (issuers.length === 0) issuers.push(DEFAULT_ISSUER);
  const jwksUri = (values.get('service-account-jwks-uri') as string | undefined) ?? '';
  if (jwksUri !== '') {
    let ok = false;
    try {
      ok = new URL(jwksUri).protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok)
      throw new FlagError(
        `service-account-jwks-uri requires https scheme, parsed as: ${JSON.stringify(jwksUri)}`,
      );
  }
  const maxMs = (values.get('service-account-max-token-expiration') as number | undefined) ?? 0;
  if (maxMs !== 0 && (maxMs < 3_600_000 || maxMs > 2 ** 32 * 1000)) {
    throw new FlagError('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
  }
  const audiences = list('api-audiences');
  return {
    keyFiles: list('service-account-key-file').map(resolvePath),
    signingKeyFile: resolvePath((values.get('service-account-signing-key-file') as string | undefined) ?? ''),
    issuers,
    apiAudiences: audiences.length > 0 ? audiences : [...issuers],
    jwksUri,
    lookup: (values.get('service-account-lookup') as boolean | undefined) ?? true,
    maxTokenExpirationSeconds: Math.floor(maxMs / 1000),
    extendTokenExpiration:
      (values.get('service-account-extend-token-expiration') as boolean | undefined) ?? true,
  };
}
