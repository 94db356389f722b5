/**
 * Object names: the rule each kind applies to `metadata.name` (and, with `prefix`, to
 * `metadata.generateName`), returning kube's messages.
 */
import {
  byteLength,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  maxLenError,
} from './formats.js';
import { kindInfo, type NameRule } from './kinds.js';

/**
 * kube's `maskTrailingDash`, quirk included: a generateName prefix may end in `-`, so the check
 * replaces the last two characters with `a` before validating (kube drops two, not one).
 */
function maskTrailingDash(name: string): string {
  return name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** Applies one name rule; `prefix` marks a generateName prefix (trailing `-` allowed). */
export function checkName(rule: NameRule, name: string, prefix = false): string[] {
  switch (rule) {
    case 'subdomain':
      return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
    case 'label':
      return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
    case 'dns1035':
      return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
    case 'path':
      return isPathSegmentName(name);
    case 'csidriver': {
      const errs: string[] = [];
      if (byteLength(name) > 63) errs.push(maxLenError(63));
      errs.push(...isDNS1123Subdomain(name.toLowerCase()));
      return errs;
    }
    case 'any':
    case 'virtual':
      return [];
  }
}

/** The name rule of a kind: its built-in rule, or DNS subdomain for custom resources. */
export function nameRule(group: string, kind: string): NameRule {
  return kindInfo(group, kind)?.name ?? 'subdomain';
}

/**
 * Validates an object name as kube-apiserver does for that kind.
 *
 * @param group API group (`''` for core).
 * @param kind Kind, e.g. `Service`.
 * @param name The name; an empty name is not reported here (it is "Required" in
 *   `validateObjectMeta`).
 * @param prefix True to validate a `generateName` prefix (a trailing `-` is allowed).
 * @returns kube's detail messages (empty when valid), e.g. for `Service` and `my_svc`:
 *   `a DNS-1035 label must consist of lower case alphanumeric characters or '-', ...`.
 *   CronJob names longer than 52 bytes also fail (on create; see `nameErrors`).
 *
 * @example validateName('', 'Namespace', 'Kube-System') // one RFC 1123 label message
 */
export function validateName(group: string, kind: string, name: string, prefix = false): string[] {
  return nameErrors(group, kind, name, prefix, false);
}

/**
 * `validateName` with kube's update exceptions: on update a StatefulSet's name is not
 * re-validated (older releases accepted subdomains) and the CronJob length limit is skipped.
 */
export function nameErrors(
  group: string,
  kind: string,
  name: string,
  prefix: boolean,
  update: boolean,
): string[] {
  if (name === '') return [];
  if (update && group === 'apps' && kind === 'StatefulSet') return [];
  const errs = checkName(nameRule(group, kind), name, prefix);
  // CronJob names leave room for the 11-character suffix of the Jobs they create.
  if (!prefix && !update && group === 'batch' && kind === 'CronJob' && byteLength(name) > 52) {
    errs.push('must be no more than 52 characters');
  }
  return errs;
}
