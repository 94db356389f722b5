/**
 * Quantities in defaulted objects: kube's `SetDefaults_ResourceList` rounds every entry of a
 * resource list up to milli precision, and its serialiser writes quantities in canonical form.
 * Doing both here makes a stored object read back as kube-apiserver would return it
 * (`cpu: 0.5` → `cpu: 500m`, `memory: 1024Mi` → `memory: 1Gi`).
 */
import { canonicalQuantity, parseQuantity, roundUpToMilli } from '../validation/quantity.js';
import { objectAt, type JsonObject } from './mutate.js';

/** Rounds and canonicalises every quantity of the resource list at `o[k]`; unparsable values stay. */
export function defaultResourceList(o: JsonObject | undefined, k: string): void {
  const list = objectAt(o, k);
  if (list === undefined) return;
  for (const [name, value] of Object.entries(list)) {
    const q = parseQuantity(value);
    if (q !== undefined) list[name] = canonicalQuantity(roundUpToMilli(q));
  }
}

/** Canonicalises the single quantity at `o[k]` (no rounding); unparsable values stay. */
export function canonicalizeQuantity(o: JsonObject | undefined, k: string): void {
  if (o === undefined) return;
  const q = parseQuantity(o[k]);
  if (q !== undefined) o[k] = canonicalQuantity(q);
}
