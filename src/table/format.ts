/**
 * Cell formatting shared by several kinds: label maps, label selectors, container lists, access
 * modes, "a,b,c + N more..." lists. Each mirrors the apimachinery or kubectl helper that
 * kube-apiserver's printers call, so the strings match byte for byte.
 */
import { list, obj, str, stringMap } from './fields.js';

/**
 * A label map as `labels.FormatLabels` prints it: `k=v` pairs sorted by key, joined by `,`;
 * `<none>` when the map is empty or missing.
 */
export function formatLabels(value: unknown): string {
  const entries = [...stringMap(value)].sort(([a], [b]) => compareStrings(a, b));
  if (entries.length === 0) return '<none>';
  return entries.map(([k, v]) => `${k}=${v}`).join(',');
}

/** Byte-order comparison of two strings (Go's `<` on strings, for ASCII keys). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One requirement of a selector, as `labels.Requirement.String` prints it. */
interface Requirement {
  readonly key: string;
  readonly text: string;
}

/**
 * The string form of a `metav1.LabelSelector` (`LabelSelectorAsSelector(sel).String()`):
 * requirements sorted by key and joined by `,`; `matchLabels` entries print as `k=v`, expressions
 * as `k in (a,b)`, `k notin (a,b)`, `k`, `!k` with values sorted.
 *
 * @returns the string (`''` for a missing selector or one with no requirements), or `undefined`
 * when the selector is invalid (unknown operator, `In`/`NotIn` without values, `Exists`/
 * `DoesNotExist` with values). Label key and value syntax is not checked.
 */
export function selectorString(value: unknown): string | undefined {
  const selector = obj(value);
  const requirements: Requirement[] = [];
  for (const [key, v] of stringMap(selector['matchLabels'])) {
    requirements.push({ key, text: `${key}=${v}` });
  }
  for (const item of list(selector['matchExpressions'])) {
    const expr = obj(item);
    const key = str(expr['key']);
    const values = list(expr['values']).map(str).sort(compareStrings);
    switch (str(expr['operator'])) {
      case 'In':
        if (values.length === 0) return undefined;
        requirements.push({ key, text: `${key} in (${values.join(',')})` });
        break;
      case 'NotIn':
        if (values.length === 0) return undefined;
        requirements.push({ key, text: `${key} notin (${values.join(',')})` });
        break;
      case 'Exists':
        if (values.length !== 0) return undefined;
        requirements.push({ key, text: key });
        break;
      case 'DoesNotExist':
        if (values.length !== 0) return undefined;
        requirements.push({ key, text: `!${key}` });
        break;
      default:
        return undefined;
    }
  }
  // Go's sort.Sort is not stable, but requirements with equal keys only arise from a key in both
  // matchLabels and matchExpressions; keeping insertion order there is the common outcome.
  requirements.sort((a, b) => compareStrings(a.key, b.key));
  return requirements.map((r) => r.text).join(',');
}

/**
 * A label selector as `metav1.FormatLabelSelector` prints it: {@link selectorString}, with
 * `<none>` for an empty result and `<error>` for an invalid selector.
 */
export function formatLabelSelector(value: unknown): string {
  const text = selectorString(value);
  if (text === undefined) return '<error>';
  return text === '' ? '<none>' : text;
}

/**
 * The CONTAINERS and IMAGES cells of a pod template: names and images of `containers`, each joined
 * by `,` (empty strings for no containers).
 */
export function containerCells(containers: unknown): [names: string, images: string] {
  const items = list(containers).map(obj);
  return [items.map((c) => str(c['name'])).join(','), items.map((c) => str(c['image'])).join(',')];
}

/** The containers of a pod template (`template.spec.containers`). */
export function templateContainers(template: unknown): unknown {
  return obj(obj(template)['spec'])['containers'];
}

const ACCESS_MODES: readonly (readonly [mode: string, short: string])[] = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

/**
 * Access modes as `RWO,ROX,RWX,RWOP` abbreviations, always in that order, without duplicates;
 * unknown modes are left out; `''` for none.
 */
export function accessModes(value: unknown): string {
  const modes = new Set(list(value).map(str));
  return ACCESS_MODES.filter(([mode]) => modes.has(mode))
    .map(([, short]) => short)
    .join(',');
}

/** `host:port` as Go's `net.JoinHostPort` writes it: IPv6 hosts in brackets. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * A list cut to its first `max` entries (`listWithMoreString`): `a,b,c + 2 more...` when entries
 * were left out, `<unset>` when there were none.
 */
export function listWithMore(items: readonly string[], max: number): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

/** A boolean pointer as kube prints it: `True`, `False`, or `<unset>` when nil. */
export function boolPtr(value: boolean | undefined): string {
  return value === undefined ? '<unset>' : value ? 'True' : 'False';
}

/**
 * The load-balancer ingress points of a Service or Ingress status: the IP (or hostname when there is
 * no IP) of each entry, deduplicated, sorted, joined by `,`. The server always prints the wide form,
 * so no truncation applies.
 */
export function loadBalancerIngress(status: unknown): string {
  const points = new Set<string>();
  for (const item of list(obj(status)['ingress'])) {
    const entry = obj(item);
    const ip = str(entry['ip']);
    const hostname = str(entry['hostname']);
    if (ip !== '') points.add(ip);
    else if (hostname !== '') points.add(hostname);
  }
  return [...points].sort(compareStrings).join(',');
}
