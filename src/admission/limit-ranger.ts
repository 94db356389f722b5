/**
 * kube's LimitRanger, over the namespace's LimitRanges:
 * - mutating, new pods: each container (and init container) without a request or limit gets the
 *   `Container` item's `defaultRequest` / `default` (with kube's item defaulting: default from
 *   max, defaultRequest from default, then from min), recorded in the pod's
 *   `kubernetes.io/limit-ranger` annotation;
 * - validating, new pods and new or updated PersistentVolumeClaims: `min`, `max` and
 *   `maxLimitRequestRatio` per Container, per Pod (sums) and per PersistentVolumeClaim, with
 *   kube's messages (`maximum cpu usage per Container is 1, but limit is 2`).
 */
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import { compareQuantities, milliValue, quantitySign, type Quantity } from '../validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { admissionForbidden } from './forbidden.js';
import { isCore, objectList, specOf } from './pod-spec.js';
import { quantityText, resourcesJson, resourcesOf, type Resources } from './quantities.js';
import { podResources } from './quota/usage.js';

const ANNOTATION = 'kubernetes.io/limit-ranger';

interface Item {
  readonly type: string;
  readonly min: Resources;
  readonly max: Resources;
  readonly default: Resources;
  readonly defaultRequest: Resources;
  readonly ratio: Resources;
}

/** The items of the namespace's LimitRanges, with kube's item defaulting. */
function itemsOf(ranges: readonly KubeObject[]): Item[] {
  const out: Item[] = [];
  for (const lr of ranges) {
    for (const raw of objectList(specOf(lr)['limits'])) {
      const type = typeof raw['type'] === 'string' ? raw['type'] : '';
      const min = resourcesOf(raw['min']);
      const max = resourcesOf(raw['max']);
      const def = resourcesOf(raw['default']);
      const defReq = resourcesOf(raw['defaultRequest']);
      if (type === 'Container') {
        for (const [k, v] of max) if (!def.has(k)) def.set(k, v);
        for (const [k, v] of def) if (!defReq.has(k)) defReq.set(k, v);
        for (const [k, v] of min) if (!defReq.has(k)) defReq.set(k, v);
      }
      out.push({
        type,
        min,
        max,
        default: def,
        defaultRequest: defReq,
        ratio: resourcesOf(raw['maxLimitRequestRatio']),
      });
    }
  }
  return out;
}

/** One observed value checked against a bound: `required` ones must be present. */
type Observed = readonly [what: 'request' | 'limit', value: Quantity | undefined, required: boolean];

/**
 * kube's min and max messages: the first of `observed` (in kube's order of checks) that is
 * missing while required, or beyond `enforced` (below a minimum, above a maximum).
 */
function boundViolation(
  bound: 'minimum' | 'maximum',
  t: string,
  r: string,
  enforced: Quantity,
  observed: readonly Observed[],
): string | undefined {
  const head = `${bound} ${r} usage per ${t} is ${quantityText(enforced)}`;
  for (const [what, value, required] of observed) {
    if (value === undefined) {
      if (required) return `${head}.  No ${what} is specified`;
      continue;
    }
    const c = compareQuantities(value, enforced);
    if (bound === 'minimum' ? c < 0 : c > 0) return `${head}, but ${what} is ${quantityText(value)}`;
  }
  return undefined;
}

function ratioConstraint(
  t: string,
  r: string,
  enforced: Quantity,
  request: Resources,
  limit: Resources,
): string | undefined {
  const req = request.get(r);
  const lim = limit.get(r);
  const e = quantityText(enforced);
  if (req === undefined || quantitySign(req) === 0) {
    return `${r} max limit to request ratio per ${t} is ${e}, but no request is specified or request is 0`;
  }
  if (lim === undefined || quantitySign(lim) === 0) {
    return `${r} max limit to request ratio per ${t} is ${e}, but no limit is specified or limit is 0`;
  }
  const observed = Number(milliValue(lim)) / Number(milliValue(req));
  if (observed * 1000 > Number(milliValue(enforced))) {
    return `${r} max limit to request ratio per ${t} is ${e}, but provided ratio is ${observed.toFixed(6)}`;
  }
  return undefined;
}

/** Every min/max/ratio violation of one request/limit pair against `item`. */
function violations(
  item: Item,
  t: string,
  request: Resources,
  limit: Resources,
  maxOnRequest = false,
): string[] {
  const out: (string | undefined)[] = [];
  for (const [r, q] of item.min) {
    out.push(
      boundViolation('minimum', t, r, q, [
        ['request', request.get(r), true],
        ['limit', limit.get(r), false],
      ]),
    );
  }
  for (const [r, q] of item.max) {
    const observed: Observed[] = maxOnRequest
      ? [['request', request.get(r), true]]
      : [
          ['limit', limit.get(r), true],
          ['request', request.get(r), false],
        ];
    out.push(boundViolation('maximum', t, r, q, observed));
  }
  for (const [r, q] of item.ratio) out.push(ratioConstraint(t, r, q, request, limit));
  return out.filter((m): m is string => m !== undefined);
}

const resourcesField = (c: JsonObject, which: 'requests' | 'limits'): Resources =>
  resourcesOf(isJsonObject(c['resources']) ? c['resources'][which] : undefined);

/** kube's `utilerrors.NewAggregate(...).Error()`. */
function aggregate(messages: readonly string[]): string {
  return messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`;
}

/** An in-place resize of a pod's containers, which kube also checks against the namespace's limits. */
function isResize(a: AdmissionAttributes): boolean {
  return isCore(a, 'Pod') && a.subresource === 'resize' && a.operation === 'UPDATE';
}

export function limitRanger(objects: AdmissionObjects): AdmissionPlugin {
  const items = async (a: AdmissionAttributes): Promise<Item[]> =>
    itemsOf(await objects.list(KINDS.limitRange, a.namespace));

  return {
    name: 'LimitRanger',
    handles: (a) =>
      isResize(a) ||
      (a.subresource === undefined &&
        ((isCore(a, 'Pod') && a.operation === 'CREATE') ||
          (isCore(a, 'PersistentVolumeClaim') && (a.operation === 'CREATE' || a.operation === 'UPDATE')))),
    admit: async (a) => {
      if (!isCore(a, 'Pod') || a.object === undefined) return;
      const containerItems = (await items(a)).filter((i) => i.type === 'Container');
      if (containerItems.length === 0) return;
      const defLimits: Resources = new Map();
      const defRequests: Resources = new Map();
      for (const i of containerItems) {
        for (const [k, v] of i.default) defLimits.set(k, v);
        for (const [k, v] of i.defaultRequest) defRequests.set(k, v);
      }
      const notes: string[] = [];
      const spec = specOf(a.object);
      const merge = (c: JsonObject, prefix: string): void => {
        const res: JsonObject = isJsonObject(c['resources']) ? c['resources'] : {};
        const limits = resourcesOf(res['limits']);
        const requests = resourcesOf(res['requests']);
        const setLimits = [...defLimits.keys()].filter((k) => !limits.has(k)).sort();
        const setRequests = [...defRequests.keys()].filter((k) => !requests.has(k)).sort();
        for (const k of setLimits) limits.set(k, defLimits.get(k) as Quantity);
        for (const k of setRequests) requests.set(k, defRequests.get(k) as Quantity);
        if (setLimits.length === 0 && setRequests.length === 0) return;
        c['resources'] = {
          ...res,
          ...(limits.size > 0
            ? {
                limits: {
                  ...(isJsonObject(res['limits']) ? res['limits'] : {}),
                  ...resourcesJson(new Map(setLimits.map((k) => [k, limits.get(k) as Quantity]))),
                },
              }
            : {}),
          ...(requests.size > 0
            ? {
                requests: {
                  ...(isJsonObject(res['requests']) ? res['requests'] : {}),
                  ...resourcesJson(new Map(setRequests.map((k) => [k, requests.get(k) as Quantity]))),
                },
              }
            : {}),
        };
        const name = typeof c['name'] === 'string' ? c['name'] : '';
        if (setRequests.length > 0) notes.push(`${setRequests.join(', ')} request for ${prefix} ${name}`);
        if (setLimits.length > 0) notes.push(`${setLimits.join(', ')} limit for ${prefix} ${name}`);
      };
      for (const c of objectList(spec['containers'])) merge(c, 'container');
      for (const c of objectList(spec['initContainers'])) merge(c, 'init container');
      // A resize keeps the pod's annotations (kube's resize strategy resets metadata after admission).
      if (notes.length > 0 && !isResize(a)) {
        a.object.metadata.annotations = {
          ...(a.object.metadata.annotations ?? {}),
          [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}`,
        };
      }
    },
    validate: async (a) => {
      if (a.object === undefined) return;
      const all = await items(a);
      if (all.length === 0) return;
      const errors: string[] = [];
      if (isCore(a, 'PersistentVolumeClaim')) {
        const spec = specOf(a.object);
        const requests = resourcesOf(
          isJsonObject(spec['resources']) ? spec['resources']['requests'] : undefined,
        );
        for (const i of all.filter((x) => x.type === 'PersistentVolumeClaim')) {
          errors.push(...violations(i, 'PersistentVolumeClaim', requests, new Map(), true));
        }
      } else {
        const spec = specOf(a.object);
        for (const i of all) {
          if (i.type === 'Container') {
            for (const c of [...objectList(spec['containers']), ...objectList(spec['initContainers'])]) {
              errors.push(
                ...violations(i, 'Container', resourcesField(c, 'requests'), resourcesField(c, 'limits')),
              );
            }
          } else if (i.type === 'Pod') {
            errors.push(
              ...violations(i, 'Pod', podResources(a.object, 'requests'), podResources(a.object, 'limits')),
            );
          }
        }
      }
      if (errors.length > 0) throw admissionForbidden(a, aggregate(errors));
    },
  };
}
