/**
 * The string `format`s kube validates in custom resources (kube-openapi's strfmt registry, after
 * apiextensions strips the formats it does not support). Numeric formats (`int32`, `int64`,
 * `float`, `double`) and unknown ones are not checked, as in kube.
 */
import { isIP } from 'node:net';
import { cidrErrors } from '../validation/formats.js';

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/u;
const MAC =
  /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\.){3}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\.){9}[0-9a-fA-F]{4}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:?\d{2})$/;
const DURATION =
  /^(\s*[-+]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|sec|minutes?|min|hours?|hr|days?|weeks?|wk)\s*)+$/;
const BSON = /^[0-9a-fA-F]{24}$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const ISBN10 = /^(?:[0-9]{9}X|[0-9]{10})$/;
const ISBN13 = /^(?:[0-9]{13})$/;
const CREDITCARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;

function validDate(y: string, m: string, d: string): boolean {
  const mm = Number(m);
  const dd = Number(d);
  if (mm < 1 || mm > 12 || dd < 1) return false;
  const days = new Date(Date.UTC(Number(y), mm, 0)).getUTCDate();
  return dd <= days;
}

function isURI(s: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment handling.
  if (s.startsWith('/')) return !/\s/.test(s);
  try {
    const u = new URL(s);
    return u.protocol !== '' && !/\s/.test(s);
  } catch {
    return false;
  }
}

function isBase64(s: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0;
}

const CHECKS: ReadonlyMap<string, (s: string) => boolean> = new Map<string, (s: string) => boolean>([
  ['bsonobjectid', (s) => BSON.test(s)],
  ['uri', isURI],
  ['email', (s) => EMAIL.test(s)],
  ['hostname', (s) => s.length <= 255 && HOSTNAME.test(s)],
  ['ipv4', (s) => isIP(s) === 4],
  ['ipv6', (s) => isIP(s) === 6],
  ['cidr', (s) => cidrErrors(s).length === 0],
  ['mac', (s) => MAC.test(s)],
  ['uuid', (s) => UUID.test(s)],
  ['uuid3', (s) => UUID3.test(s)],
  ['uuid4', (s) => UUID4.test(s)],
  ['uuid5', (s) => UUID5.test(s)],
  ['isbn', (s) => ISBN10.test(s.replace(/[- ]/g, '')) || ISBN13.test(s.replace(/[- ]/g, ''))],
  ['isbn10', (s) => ISBN10.test(s.replace(/[- ]/g, ''))],
  ['isbn13', (s) => ISBN13.test(s.replace(/[- ]/g, ''))],
  ['creditcard', (s) => CREDITCARD.test(s.replace(/[- ]/g, ''))],
  ['ssn', (s) => SSN.test(s)],
  ['hexcolor', (s) => HEXCOLOR.test(s)],
  ['rgbcolor', (s) => RGBCOLOR.test(s)],
  ['byte', isBase64],
  ['password', () => true],
  [
    'date',
    (s) => {
      const m = DATE.exec(s);
      return m !== null && validDate(m[1] ?? '', m[2] ?? '', m[3] ?? '');
    },
  ],
  ['duration', (s) => DURATION.test(s)],
  [
    'date-time',
    (s) => {
      const m = DATE_TIME.exec(s);
      return (
        m !== null &&
        validDate(m[1] ?? '', m[2] ?? '', m[3] ?? '') &&
        Number(m[4]) < 24 &&
        Number(m[5]) < 60 &&
        Number(m[6]) < 61
      );
    },
  ],
]);

/** The formats kube validates (`datetime` is an alias of `date-time`). */
export const SUPPORTED_FORMATS: readonly string[] = [...CHECKS.keys(), 'datetime'];

/** False when `value` does not have string format `format`; true for formats kube does not check. */
export function matchesFormat(format: string, value: string): boolean {
  const check = CHECKS.get(format === 'datetime' ? 'date-time' : format);
  return check === undefined ? true : check(value);
}
