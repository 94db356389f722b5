/**
 * The field manager of a request that names none: kube-apiserver uses the User-Agent up to its
 * first `/` (`kubectl/v1.30.0 (linux/amd64) kubernetes/abc` → `kubectl`), without unprintable
 * characters, cut to 128 bytes of UTF-8 (managerOrUserAgent / prefixFromUserAgent). Clients
 * that care name themselves: kubectl sends `fieldManager=kubectl-client-side-apply` for
 * client-side apply, `kubectl-edit` for edit, `kubectl` for `apply --server-side`.
 */

/** kube's limit on field manager names, in bytes of UTF-8 (FieldManagerMaxLength). */
export const FIELD_MANAGER_MAX_LENGTH = 128;

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * kube's default manager name from a User-Agent header (empty when the header is absent).
 * @example defaultManagerName('kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b') // 'kubectl'
 */
export function defaultManagerName(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!PRINTABLE.test(ch)) continue;
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** The `fieldManager` query parameter when given and non-empty, else {@link defaultManagerName}. */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  return fieldManager !== undefined && fieldManager !== '' ? fieldManager : defaultManagerName(userAgent);
}
