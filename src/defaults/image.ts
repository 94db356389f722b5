/**
 * The image reference tag as kubelet's `parsers.ParseImageName` reports it, which decides the
 * default `imagePullPolicy`: `latest` when neither tag nor digest is given, the tag when one is,
 * `''` for digest-only references and for references the Docker grammar rejects.
 */

// The distribution reference grammar, reduced to what decides the tag.
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]+)?`;
const NAME_RE = new RegExp(`^(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const DIGEST_RE = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** The tag kube derives from an image reference (see module comment). */
export function imageTag(image: string): string {
  let rest = image;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST_RE.test(digest)) return '';
  }
  let tag = '';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG_RE.test(tag)) return '';
  }
  if (rest.length === 0 || rest.length > 255 || !NAME_RE.test(rest)) return '';
  if (tag === '' && digest === '') return 'latest';
  return tag;
}

/** `Always` for `:latest` (or untagged) images, else `IfNotPresent`. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}
