/**
 * Link rewriting in the answers of the proxy subresources, as apimachinery's proxy `Transport`
 * does it for kube-apiserver: the URLs of a `text/html` page (and a redirect's `Location`) that
 * point at the backend itself (an absolute path, or the backend's or the request's own host)
 * get the proxy's path prefix, so that the page's links, images and forms go through the proxy
 * too. Relative URLs and URLs to other hosts are left as they are.
 *
 * Only the URL attributes of the tags in {@link URL_ATTRIBUTES} are looked at. Such a tag is
 * written back as kube's tokenizer writes a tag (lower-case names, every value double-quoted
 * and escaped); everything else in the page passes through byte for byte. The contents of
 * script, style and the other raw-text elements are not parsed.
 */
import { posix } from 'node:path';

/** Which attributes of which tags hold URLs (kube's `atomsToAttrs`). */
export const URL_ATTRIBUTES: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    a: ['href'],
    applet: ['codebase'],
    area: ['href'],
    audio: ['src'],
    base: ['href'],
    blockquote: ['cite'],
    body: ['background'],
    button: ['formaction'],
    command: ['icon'],
    del: ['cite'],
    embed: ['src'],
    form: ['action'],
    frame: ['longdesc', 'src'],
    head: ['profile'],
    html: ['manifest'],
    iframe: ['longdesc', 'src'],
    img: ['longdesc', 'src', 'usemap'],
    input: ['src', 'usemap', 'formaction'],
    ins: ['cite'],
    link: ['href'],
    object: ['classid', 'codebase', 'data', 'usemap'],
    q: ['cite'],
    script: ['src'],
    source: ['src'],
    video: ['poster', 'src'],
  }).map(([tag, attrs]) => [tag, new Set(attrs)]),
);

/** Elements whose content is text up to their end tag (no tags inside). */
const RAW_TEXT = new Set([
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'plaintext',
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
]);

/** Where rewritten URLs go. */
export interface LinkRewrite {
  /** The proxy's path prefix: the request's path up to and including `/proxy`. */
  readonly prefix: string;
  /** `host:port` of the backend the request went to. */
  readonly backendHost: string;
  /** The request's own `Host` (a URL naming it is the proxy's own). */
  readonly requestHost: string;
}

/** A URL cut into its parts (Go's `url.Parse`, as far as the rewrite needs it). */
interface UrlParts {
  scheme: string;
  /** `//userinfo@host` authority present. */
  authority: boolean;
  userinfo: string;
  host: string;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

function parseUrl(value: string): UrlParts | undefined {
  // Go's parser refuses control characters.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return undefined;
  }
  let rest = value;
  let fragment: string | undefined;
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let scheme = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1] ?? '';
    rest = rest.slice(scheme.length + 1);
  }
  let query: string | undefined;
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let authority = false;
  let userinfo = '';
  let host = '';
  if (rest.startsWith('//')) {
    authority = true;
    const end = rest.indexOf('/', 2);
    let auth = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = auth.lastIndexOf('@');
    if (at >= 0) {
      userinfo = auth.slice(0, at + 1);
      auth = auth.slice(at + 1);
    }
    host = auth;
  }
  return { scheme, authority, userinfo, host, path: rest, query, fragment };
}

function formatUrl(u: UrlParts): string {
  let out = u.scheme === '' ? '' : `${u.scheme}:`;
  if (u.authority && (u.host !== '' || u.userinfo !== '')) out += `//${u.userinfo}${u.host}`;
  out += u.path;
  if (u.query !== undefined) out += `?${u.query}`;
  if (u.fragment !== undefined) out += `#${u.fragment}`;
  return out;
}

/** Go's `path.Join(a, b)`: cleaned, without a trailing slash. */
function joinPath(a: string, b: string): string {
  const joined = posix.normalize(`${a}/${b}`);
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

/**
 * One URL through the proxy (kube's `rewriteURL`): unchanged when relative or on another host;
 * else the scheme and host dropped (unless it names the request's own host) and the path
 * prefixed, when it is not already.
 */
export function rewriteUrl(value: string, r: LinkRewrite): string {
  const u = parseUrl(value);
  if (u === undefined) return value;
  const otherHost = u.host !== '' && u.host !== r.backendHost && u.host !== r.requestHost;
  if (otherHost || !u.path.startsWith('/')) return value;
  if (u.host !== r.requestHost) {
    u.scheme = '';
    u.host = '';
    u.userinfo = '';
    u.authority = false;
  }
  if (!u.path.startsWith(r.prefix)) {
    const trailing = u.path.endsWith('/');
    u.path = joinPath(r.prefix, u.path) + (trailing ? '/' : '');
  }
  return formatUrl(u);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The character references of an attribute value, decoded (the common named ones, and numeric). */
function unescapeValue(v: string): string {
  return v.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** Go's `html.EscapeString` as a tag's writer uses it for values. */
function escapeValue(v: string): string {
  return v.replace(/[&'<>"\r]/g, (c) =>
    c === '&'
      ? '&amp;'
      : c === "'"
        ? '&#39;'
        : c === '<'
          ? '&lt;'
          : c === '>'
            ? '&gt;'
            : c === '"'
              ? '&#34;'
              : '&#13;',
  );
}

const SPACE = /[\t\n\f\r ]/;

/** One start tag read from `html` at `start` (`<` + a letter), or undefined when it does not end. */
function readStartTag(
  html: string,
  start: number,
): { name: string; attrs: [string, string][]; selfClosing: boolean; end: number } | undefined {
  let i = start + 1;
  while (i < html.length && !SPACE.test(html[i] ?? '') && html[i] !== '/' && html[i] !== '>') i++;
  const name = html.slice(start + 1, i).toLowerCase();
  const attrs: [string, string][] = [];
  let selfClosing = false;
  for (;;) {
    while (i < html.length && (SPACE.test(html[i] ?? '') || html[i] === '/')) {
      selfClosing = html[i] === '/';
      i++;
    }
    if (i >= html.length) return undefined;
    if (html[i] === '>') return { name, attrs, selfClosing, end: i + 1 };
    selfClosing = false;
    const keyStart = i;
    while (i < html.length && !SPACE.test(html[i] ?? '') && !'/>='.includes(html[i] ?? '')) i++;
    const key = html.slice(keyStart, i).toLowerCase();
    while (i < html.length && SPACE.test(html[i] ?? '')) i++;
    let value = '';
    if (html[i] === '=') {
      i++;
      while (i < html.length && SPACE.test(html[i] ?? '')) i++;
      const quote = html[i];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, i + 1);
        if (close < 0) return undefined;
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < html.length && !SPACE.test(html[i] ?? '') && html[i] !== '>') i++;
        value = html.slice(valueStart, i);
      }
    }
    attrs.push([key, unescapeValue(value)]);
  }
}

/** `html` with the URLs of {@link URL_ATTRIBUTES} rewritten by `rewrite` (see the module comment). */
export function rewriteHtml(html: string, rewrite: (url: string) => string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    const next = html[lt + 1] ?? '';
    let skipTo: number;
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      skipTo = close < 0 ? html.length : close + 3;
    } else if (next === '!' || next === '?' || next === '/') {
      const close = html.indexOf('>', lt);
      skipTo = close < 0 ? html.length : close + 1;
    } else if (/[a-zA-Z]/.test(next)) {
      const tag = readStartTag(html, lt);
      if (tag === undefined) break;
      const urls = URL_ATTRIBUTES.get(tag.name);
      if (urls !== undefined) {
        const attrs = tag.attrs
          .map(([k, v]) => ` ${k}="${escapeValue(urls.has(k) ? rewrite(v) : v)}"`)
          .join('');
        out += html.slice(copied, lt) + `<${tag.name}${attrs}${tag.selfClosing ? '/>' : '>'}`;
        copied = tag.end;
      }
      skipTo = tag.end;
      if (RAW_TEXT.has(tag.name) && !tag.selfClosing) {
        const endTag = new RegExp(`</${tag.name}`, 'gi');
        endTag.lastIndex = skipTo;
        skipTo = endTag.exec(html)?.index ?? html.length;
      }
    } else {
      skipTo = lt + 1;
    }
    i = skipTo;
  }
  return out + html.slice(copied);
}
