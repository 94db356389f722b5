/**
 * String formats kube-apiserver checks everywhere (apimachinery's `util/validation` and
 * `api/validate/content`): DNS names, qualified names, label values, port names, config keys,
 * IPs. Each check returns kube's detail messages (empty when valid), so callers wrap them into
 * `invalid(path, value, msg)` exactly as kube does.
 *
 * Lengths are counted in bytes, as Go's `len(string)` does.
 */
import { isIP } from 'node:net';

const encoder = new TextEncoder();

/** Byte length of a string in UTF-8, as Go's `len`. */
export function byteLength(s: string): number {
  // Fast path: pure ASCII strings are the norm for names.
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  return ascii ? s.length : encoder.encode(s).length;
}

/** `must be no more than N characters`. */
export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

/** kube's `RegexError`: the message, examples and the regex. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** `must be between lo and hi, inclusive`. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

/** RFC 1123 label: at most 63 bytes of `[a-z0-9-]`, alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) {
      errs.push('must not contain dots');
    } else {
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
    }
  }
  return errs;
}

/** RFC 1123 subdomain: at most 253 bytes of dot-separated labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

/** RFC 1035 label (Service names): starts with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

const WILDCARD_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_RE = new RegExp(`^${WILDCARD_FMT}$`);

/** `*.example.com` (Ingress hosts). */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!WILDCARD_RE.test(value)) {
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_FMT,
        '*.example.com',
      ),
    );
  }
  return errs;
}

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Qualified name / label key: `[prefix/]name`, prefix a DNS subdomain, name ≤ 63. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = value;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) {
      errs.push('prefix part must be non-empty');
    } else {
      for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
    }
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) {
    errs.push('name part must be non-empty');
  } else if (byteLength(name) > 63) {
    errs.push(`name part ${maxLenError(63)}`);
  }
  if (!LABEL_KEY_RE.test(name)) {
    errs.push(`name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** Label value: empty, or ≤ 63 bytes of `[-A-Za-z0-9_.]` with alphanumeric ends. */
export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

const C_IDENT_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const C_IDENT_RE = new RegExp(`^${C_IDENT_FMT}$`);

/** C identifier. */
export function isCIdentifier(value: string): string[] {
  if (C_IDENT_RE.test(value)) return [];
  return [
    regexError(
      "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
      C_IDENT_FMT,
      'my_name',
      'MY_NAME',
      'MyName',
    ),
  ];
}

/** Path-segment names (RBAC kinds and others): anything but `.`, `..`, `/` and `%`. */
export function isPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const errs: string[] = [];
  if (value.includes('/')) errs.push("may not contain '/'");
  if (value.includes('%')) errs.push("may not contain '%'");
  return errs;
}

/** Port number 1..65535. */
export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** IANA service name as kube restricts it (container and probe port names). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) {
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  }
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) {
    errs.push('must not begin or end with a hyphen');
  }
  return errs;
}

const PERCENT_FMT = '[0-9]+%';

/** `25%`. */
export function isValidPercent(value: string): string[] {
  if (/^[0-9]+%$/.test(value)) return [];
  return [
    regexError(
      "a valid percent string must be a numeric string followed by an ending '%'",
      PERCENT_FMT,
      '1%',
      '93%',
    ),
  ];
}

const HEADER_FMT = '[-A-Za-z0-9]+';

/** HTTP header name (probe headers). */
export function isHTTPHeaderName(value: string): string[] {
  if (/^[-A-Za-z0-9]+$/.test(value)) return [];
  return [
    regexError(
      "a valid HTTP header must consist of alphanumeric characters or '-'",
      HEADER_FMT,
      'X-Header-Name',
    ),
  ];
}

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';

function chdirPrefixErrors(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

/** ConfigMap and Secret keys. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!/^[-._a-zA-Z0-9]+$/.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_KEY_FMT,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  errs.push(...chdirPrefixErrors(value));
  return errs;
}

/**
 * Environment variable names under the relaxed rule kube applies since 1.32 (on by default):
 * any printable ASCII except `=`.
 */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push('environment variable name must be non-empty');
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x3d) {
      errs.push(
        "a valid environment variable name must consist only of printable ASCII characters other than '='",
      );
      break;
    }
  }
  return errs;
}

/** An IPv4 or IPv6 address (kube accepts leading zeros in IPv4 for compatibility). */
export function isValidIPString(value: string): boolean {
  return isIP(value) !== 0 || isSloppyIPv4(value);
}

function isSloppyIPv4(value: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  return m !== null && m.slice(1).every((p) => Number(p) <= 255);
}

/** `must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)` when not an IP. */
export function ipErrors(value: string): string[] {
  return isValidIPString(value) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

/** True for an IPv6 address string. */
export function isIPv6String(value: string): boolean {
  return isIP(value) === 6;
}

/** `must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)` when not a CIDR. */
export function cidrErrors(value: string): string[] {
  const slash = value.indexOf('/');
  const ok =
    slash > 0 &&
    isValidIPString(value.slice(0, slash)) &&
    /^\d{1,3}$/.test(value.slice(slash + 1)) &&
    Number(value.slice(slash + 1)) <= (isIPv6String(value.slice(0, slash)) ? 128 : 32);
  return ok ? [] : ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'];
}
