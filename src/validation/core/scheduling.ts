/**
 * The scheduling parts of a pod spec: tolerations, affinity, topology spread constraints and
 * DNS configuration.
 */
import { duplicate, forbidden, invalid, notSupported, required, type FieldError } from '../field-error.js';
import { ipErrors, isDNS1123Subdomain, isLabelValue, isQualifiedName } from '../formats.js';
import { arr, has, num, obj, objects, str, strings, type JsonObject } from '../json.js';
import { validateLabelSelector } from '../meta.js';
import { child, index } from '../path.js';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** `ValidateTolerations`. */
export function validateTolerations(spec: JsonObject, path: string, errs: FieldError[]): void {
  objects(spec, 'tolerations').forEach((t, i) => {
    const p = index(path, i);
    const k = str(t, 'key');
    const op = str(t, 'operator');
    const effect = str(t, 'effect');
    if (k !== '') for (const msg of isQualifiedName(k)) errs.push(invalid(child(p, 'key'), k, msg));
    if (k === '' && op !== 'Exists') {
      errs.push(
        invalid(
          child(p, 'operator'),
          op,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (has(t, 'tolerationSeconds') && effect !== 'NoExecute') {
      errs.push(
        invalid(child(p, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
      );
    }
    const value = str(t, 'value');
    if (op === 'Equal' || op === '') {
      const msgs = isLabelValue(value);
      if (msgs.length > 0) errs.push(invalid(child(p, 'operator'), value, msgs.join(';')));
    } else if (op === 'Exists') {
      if (value !== '')
        errs.push(invalid(child(p, 'operator'), value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupported(child(p, 'operator'), op, ['Equal', 'Exists']));
    }
    if (effect !== '' && !TAINT_EFFECTS.includes(effect))
      errs.push(notSupported(child(p, 'effect'), effect, TAINT_EFFECTS));
  });
}

function validateNodeSelectorRequirement(req: JsonObject, path: string, errs: FieldError[]): void {
  const op = str(req, 'operator');
  const values = strings(req, 'values');
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0)
        errs.push(required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        errs.push(
          forbidden(
            child(path, 'values'),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1)
        errs.push(
          required(child(path, 'values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"),
        );
      break;
    default:
      errs.push(invalid(child(path, 'operator'), op, 'not a valid selector operator'));
  }
  for (const msg of isQualifiedName(str(req, 'key')))
    errs.push(invalid(child(path, 'key'), str(req, 'key'), msg));
}

function validateNodeSelectorTerm(term: JsonObject, path: string, errs: FieldError[]): void {
  objects(term, 'matchExpressions').forEach((r, i) =>
    validateNodeSelectorRequirement(r, index(child(path, 'matchExpressions'), i), errs),
  );
  objects(term, 'matchFields').forEach((r, i) => {
    const p = index(child(path, 'matchFields'), i);
    if (str(r, 'key') !== 'metadata.name')
      errs.push(invalid(child(p, 'key'), str(r, 'key'), 'not a valid field selector key'));
    const op = str(r, 'operator');
    if (op !== 'In' && op !== 'NotIn')
      errs.push(invalid(child(p, 'operator'), op, 'not a valid selector operator'));
    if (strings(r, 'values').length !== 1)
      errs.push(
        required(
          child(p, 'values'),
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
      );
  });
}

/**
 * kube's `validateMatchLabelKeysAndMismatchLabelKeys`: label names, a selector to merge them
 * into, no key in both lists. A `matchLabelKeys` key also in the user's selector shows up twice
 * once merged into it (src/defaults/pod-create.ts); kube's error path for it lacks the list's
 * name, and is kept.
 */
function validateLabelKeys(term: JsonObject, path: string, errs: FieldError[]): void {
  const selector = obj(term, 'labelSelector');
  const match = strings(term, 'matchLabelKeys');
  const mismatch = strings(term, 'mismatchLabelKeys');
  for (const [field, keys] of [
    ['matchLabelKeys', match],
    ['mismatchLabelKeys', mismatch],
  ] as const) {
    if (keys.length === 0) continue;
    if (selector === undefined) {
      errs.push(forbidden(child(path, field), 'must not be specified when labelSelector is not set'));
      continue;
    }
    keys.forEach((k, i) => {
      for (const msg of isQualifiedName(k)) errs.push(invalid(index(child(path, field), i), k, msg));
    });
  }
  if (selector !== undefined) {
    const position = new Map(match.map((k, i) => [k, i]));
    const seen = new Set(Object.keys(obj(selector, 'matchLabels') ?? {}));
    for (const e of objects(selector, 'matchExpressions')) {
      const k = str(e, 'key');
      const i = position.get(k);
      if (i !== undefined && seen.has(k))
        errs.push(invalid(index(path, i), k, 'exists in both matchLabelKeys and labelSelector'));
      seen.add(k);
    }
  }
  const mismatched = new Set(mismatch);
  match.forEach((k, i) => {
    if (mismatched.has(k))
      errs.push(
        invalid(
          index(child(path, 'matchLabelKeys'), i),
          k,
          'exists in both matchLabelKeys and mismatchLabelKeys',
        ),
      );
  });
}

function validatePodAffinityTerm(term: JsonObject, path: string, errs: FieldError[]): void {
  errs.push(...validateLabelSelector(term['labelSelector'], child(path, 'labelSelector')));
  errs.push(...validateLabelSelector(term['namespaceSelector'], child(path, 'namespaceSelector')));
  for (const ns of strings(term, 'namespaces')) {
    for (const msg of isDNS1123Subdomain(ns)) errs.push(invalid(child(path, 'namespace'), ns, msg));
  }
  validateLabelKeys(term, path, errs);
  const topologyKey = str(term, 'topologyKey');
  if (topologyKey === '') errs.push(required(child(path, 'topologyKey'), 'can not be empty'));
  else
    for (const msg of isQualifiedName(topologyKey))
      errs.push(invalid(child(path, 'topologyKey'), topologyKey, msg));
}

function validateWeighted(
  list: JsonObject[],
  path: string,
  termKey: string,
  errs: FieldError[],
  fn: (t: JsonObject, p: string) => void,
): void {
  list.forEach((w, i) => {
    const p = index(path, i);
    const weight = num(w, 'weight') ?? 0;
    if (weight <= 0 || weight > 100)
      errs.push(invalid(child(p, 'weight'), weight, 'must be in the range 1-100'));
    fn(obj(w, termKey) ?? {}, child(p, termKey));
  });
}

/** `validateAffinity`. */
export function validateAffinity(spec: JsonObject, path: string, errs: FieldError[]): void {
  const affinity = obj(spec, 'affinity');
  if (affinity === undefined) return;
  const node = obj(affinity, 'nodeAffinity');
  if (node !== undefined) {
    const np = child(path, 'nodeAffinity');
    const requiredTerms = obj(node, 'requiredDuringSchedulingIgnoredDuringExecution');
    if (requiredTerms !== undefined) {
      const rp = child(np, 'requiredDuringSchedulingIgnoredDuringExecution');
      const terms = objects(requiredTerms, 'nodeSelectorTerms');
      if (terms.length === 0)
        errs.push(required(child(rp, 'nodeSelectorTerms'), 'must have at least one node selector term'));
      terms.forEach((t, i) => validateNodeSelectorTerm(t, index(child(rp, 'nodeSelectorTerms'), i), errs));
    }
    validateWeighted(
      objects(node, 'preferredDuringSchedulingIgnoredDuringExecution'),
      child(np, 'preferredDuringSchedulingIgnoredDuringExecution'),
      'preference',
      errs,
      (t, p) => validateNodeSelectorTerm(t, p, errs),
    );
  }
  for (const k of ['podAffinity', 'podAntiAffinity']) {
    const pa = obj(affinity, k);
    if (pa === undefined) continue;
    const pp = child(path, k);
    objects(pa, 'requiredDuringSchedulingIgnoredDuringExecution').forEach((t, i) =>
      validatePodAffinityTerm(t, index(child(pp, 'requiredDuringSchedulingIgnoredDuringExecution'), i), errs),
    );
    validateWeighted(
      objects(pa, 'preferredDuringSchedulingIgnoredDuringExecution'),
      child(pp, 'preferredDuringSchedulingIgnoredDuringExecution'),
      'podAffinityTerm',
      errs,
      (t, p) => validatePodAffinityTerm(t, p, errs),
    );
  }
}

/** `validateTopologySpreadConstraints`. */
export function validateTopologySpread(spec: JsonObject, path: string, errs: FieldError[]): void {
  const list = objects(spec, 'topologySpreadConstraints');
  list.forEach((c, i) => {
    const p = index(path, i);
    const maxSkew = num(c, 'maxSkew') ?? 0;
    if (maxSkew <= 0) errs.push(invalid(child(p, 'maxSkew'), maxSkew, 'must be greater than zero'));
    if (str(c, 'topologyKey') === '') errs.push(required(child(p, 'topologyKey'), 'can not be empty'));
    const when = str(c, 'whenUnsatisfiable');
    if (when !== 'DoNotSchedule' && when !== 'ScheduleAnyway') {
      errs.push(notSupported(child(p, 'whenUnsatisfiable'), when, ['DoNotSchedule', 'ScheduleAnyway']));
    }
    for (const later of list.slice(i + 1)) {
      if (str(later, 'topologyKey') === str(c, 'topologyKey') && str(later, 'whenUnsatisfiable') === when) {
        errs.push(
          duplicate(child(p, '{topologyKey, whenUnsatisfiable}'), `{${str(c, 'topologyKey')}, ${when}}`),
        );
        break;
      }
    }
    const minDomains = num(c, 'minDomains');
    if (minDomains !== undefined) {
      if (minDomains <= 0)
        errs.push(invalid(child(p, 'minDomains'), minDomains, 'must be greater than zero'));
      if (when !== 'DoNotSchedule') {
        errs.push(
          invalid(
            child(p, 'minDomains'),
            minDomains,
            `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${when}`,
          ),
        );
      }
    }
    for (const k of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      if (has(c, k) && !['Honor', 'Ignore'].includes(str(c, k)))
        errs.push(notSupported(child(p, k), c[k], ['Honor', 'Ignore']));
    }
    errs.push(...validateLabelSelector(c['labelSelector'], child(p, 'labelSelector')));
  });
}

/** `validatePodDNSConfig`. */
export function validateDNSConfig(spec: JsonObject, path: string, errs: FieldError[]): void {
  const cfg = obj(spec, 'dnsConfig');
  if (str(spec, 'dnsPolicy') === 'None') {
    if (cfg === undefined) {
      errs.push(required(path, 'must provide `dnsConfig` when `dnsPolicy` is None'));
      return;
    }
    if (strings(cfg, 'nameservers').length === 0) {
      errs.push(
        required(
          child(path, 'nameservers'),
          'must provide at least one DNS nameserver when `dnsPolicy` is None',
        ),
      );
      return;
    }
  }
  if (cfg === undefined) return;
  const nameservers = strings(cfg, 'nameservers');
  if (nameservers.length > 3)
    errs.push(invalid(child(path, 'nameservers'), nameservers, 'must not have more than 3 nameservers'));
  nameservers.forEach((ns, i) => {
    for (const msg of ipErrors(ns)) errs.push(invalid(index(child(path, 'nameservers'), i), ns, msg));
  });
  const searches = strings(cfg, 'searches');
  if (searches.length > 32)
    errs.push(invalid(child(path, 'searches'), searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048) {
    errs.push(
      invalid(
        child(path, 'searches'),
        searches,
        'must not have more than 2048 characters (including spaces) in the search list',
      ),
    );
  }
  searches.forEach((s, i) => {
    if (s === '.') return;
    const trimmed = s.endsWith('.') ? s.slice(0, -1) : s;
    for (const msg of isDNS1123Subdomain(trimmed.replaceAll('_', 'a')))
      errs.push(invalid(index(child(path, 'searches'), i), trimmed, msg));
  });
  (arr(cfg, 'options') ?? []).forEach((o, i) => {
    if (str(typeof o === 'object' && o !== null ? (o as JsonObject) : {}, 'name') === '') {
      errs.push(required(index(child(path, 'options'), i), 'must not be empty'));
    }
  });
}
