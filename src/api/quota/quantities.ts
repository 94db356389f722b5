/**
 * Resource lists (`{cpu: "100m", memory: "1Gi"}`) as exact quantities: sum, max, compare and
 * kube's text, for ResourceQuota and LimitRanger.
 */
import { isJsonObject, type JsonObject } from '../object.js';
import { canonicalQuantity, compareQuantities, parseQuantity, type Quantity } from '../quantity.js';

/** A resource list with parsed quantities. */
export type Resources = Map<string, Quantity>;

export const ZERO: Quantity = { mantissa: 0n, exp: 0, format: 'DecimalSI' };

/** `a + b` (the format of whichever is not zero, `a`'s first). */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const e = Math.min(a.exp, b.exp);
  const m = a.mantissa * 10n ** BigInt(a.exp - e) + b.mantissa * 10n ** BigInt(b.exp - e);
  return { mantissa: m, exp: e, format: a.mantissa === 0n ? b.format : a.format };
}

/** `a - b`. */
export function subQuantities(a: Quantity, b: Quantity): Quantity {
  return addQuantities(a, { ...b, mantissa: -b.mantissa });
}

/** The parsed resource list at `o` (invalid entries skipped). */
export function resourcesOf(o: unknown): Resources {
  const out: Resources = new Map();
  if (!isJsonObject(o)) return out;
  for (const [k, v] of Object.entries(o)) {
    const q = parseQuantity(v);
    if (q !== undefined) out.set(k, q);
  }
  return out;
}

/** `a + b` per resource. */
export function addResources(a: Resources, b: Resources): Resources {
  const out: Resources = new Map(a);
  for (const [k, v] of b) out.set(k, addQuantities(out.get(k) ?? ZERO, v));
  return out;
}

/** Per resource, the larger of `a` and `b`. */
export function maxResources(a: Resources, b: Resources): Resources {
  const out: Resources = new Map(a);
  for (const [k, v] of b) {
    const cur = out.get(k);
    if (cur === undefined || compareQuantities(v, cur) > 0) out.set(k, v);
  }
  return out;
}

/** kube's text of a quantity. */
export function quantityText(q: Quantity): string {
  return canonicalQuantity(q);
}

/** The JSON resource list. */
export function resourcesJson(r: Resources): JsonObject {
  const out: JsonObject = {};
  for (const k of [...r.keys()].sort()) out[k] = quantityText(r.get(k) as Quantity);
  return out;
}

/** kube's `prettyPrint`: `a=1,b=2` sorted by name. */
export function prettyPrint(r: Resources): string {
  return [...r.keys()]
    .sort()
    .map((k) => `${k}=${quantityText(r.get(k) as Quantity)}`)
    .join(',');
}
