/**
 * Resource requirements and quantities (container `resources`, pod `overhead`, PVC requests):
 * names must be standard or fully qualified, quantities well-formed and non-negative, requests
 * at most limits (equal for resources that cannot be overcommitted).
 */
import { forbidden, invalid, NEGATIVE, required, type FieldError } from '../field-error.js';
import { isQualifiedName } from '../formats.js';
import { isObject, obj, type JsonObject } from '../json.js';
import { child, key } from '../path.js';
import {
  canonicalQuantity,
  compareQuantities,
  isWholeQuantity,
  parseQuantity,
  quantitySign,
  type Quantity,
} from '../quantity.js';

/** kube's `resource.ErrFormatWrong` text, reported for values that are not quantities. */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Native resources: unprefixed or in a `kubernetes.io/` domain. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** `hugepages-<size>` resources. */
export function isHugePageResource(name: string): boolean {
  return name.startsWith('hugepages-');
}

/** Extended resources (e.g. `example.com/gpu`) are whole numbers and cannot be overcommitted. */
export function isExtendedResource(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResource(name);
}

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

function validateContainerResourceName(name: string, path: string, errs: FieldError[]): void {
  const msgs = isQualifiedName(name);
  for (const msg of msgs) errs.push(invalid(path, name, msg));
  if (msgs.length > 0) return;
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePageResource(name)) {
      errs.push(invalid(path, name, 'must be a standard resource for containers'));
    }
  } else if (!isNativeResource(name) && !isExtendedResource(name)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
  }
}

/**
 * Parses a quantity, reporting a malformed one (kube rejects those when decoding) and a
 * negative one (`ValidateNonnegativeQuantity`). Returns the quantity when it parsed.
 */
export function checkQuantity(value: unknown, path: string, errs: FieldError[]): Quantity | undefined {
  const q = parseQuantity(value);
  if (q === undefined) {
    errs.push(invalid(path, value, QUANTITY_FORMAT_ERROR));
    return undefined;
  }
  if (quantitySign(q) < 0) errs.push(invalid(path, canonicalQuantity(q), NEGATIVE));
  return q;
}

function checkResourceQuantity(
  name: string,
  value: unknown,
  path: string,
  errs: FieldError[],
): Quantity | undefined {
  const q = checkQuantity(value, path, errs);
  if (q !== undefined && isExtendedResource(name) && !isWholeQuantity(q)) {
    errs.push(invalid(path, canonicalQuantity(q), 'must be an integer'));
  }
  return q;
}

/**
 * Container resource requirements (`ValidateContainerResourceRequirements`). Errors on the
 * request-versus-limit comparison carry the `requests` path, as kube reports them.
 */
export function validateResourceRequirements(req: unknown, path: string, errs: FieldError[]): void {
  if (!isObject(req)) return;
  const limPath = child(path, 'limits');
  const reqPath = child(path, 'requests');
  const limits: JsonObject = isObject(req['limits']) ? req['limits'] : {};
  const requests: JsonObject = isObject(req['requests']) ? req['requests'] : {};
  let cpuOrMemory = false;
  let hugePages = false;
  const limitQ = new Map<string, Quantity>();
  for (const [name, value] of Object.entries(limits)) {
    const p = key(limPath, name);
    validateContainerResourceName(name, p, errs);
    const q = checkResourceQuantity(name, value, p, errs);
    if (q !== undefined) limitQ.set(name, q);
    if (isHugePageResource(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, value] of Object.entries(requests)) {
    const p = key(reqPath, name);
    validateContainerResourceName(name, p, errs);
    const q = checkResourceQuantity(name, value, p, errs);
    const limit = limitQ.get(name);
    if (q !== undefined && limit !== undefined) {
      const cmp = compareQuantities(q, limit);
      if (cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(
          invalid(
            reqPath,
            canonicalQuantity(q),
            `must be equal to ${name} limit of ${canonicalQuantity(limit)}`,
          ),
        );
      } else if (cmp > 0) {
        errs.push(
          invalid(
            reqPath,
            canonicalQuantity(q),
            `must be less than or equal to ${name} limit of ${canonicalQuantity(limit)}`,
          ),
        );
      }
    } else if (!(name in limits) && !isOvercommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePageResource(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) errs.push(forbidden(path, 'HugePages require cpu or memory'));
}

/** A plain resource list of quantities (pod overhead, PVC requests): well-formed, non-negative. */
export function validateResourceList(list: unknown, path: string, errs: FieldError[]): void {
  if (!isObject(list)) return;
  for (const [name, value] of Object.entries(list)) {
    for (const msg of isQualifiedName(name)) errs.push(invalid(key(path, name), name, msg));
    checkQuantity(value, key(path, name), errs);
  }
}

/** kube's QoS class of a pod spec (ComputePodQOS): Guaranteed, Burstable or BestEffort. */
export function podQOSClass(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const list = (k: string): unknown[] => (Array.isArray(spec[k]) ? (spec[k] as unknown[]) : []);
  const containers = [...list('containers'), ...list('initContainers')].filter(isObject);
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const resources = obj(c, 'resources');
    const requests = obj(resources, 'requests') ?? {};
    const limits = obj(resources, 'limits') ?? {};
    for (const r of ['cpu', 'memory']) {
      const req = parseQuantity(requests[r]);
      const lim = parseQuantity(limits[r]);
      if ((req !== undefined && req.mantissa !== 0n) || (lim !== undefined && lim.mantissa !== 0n))
        any = true;
      if (lim === undefined || lim.mantissa === 0n) guaranteed = false;
      else if (req !== undefined && compareQuantities(req, lim) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
