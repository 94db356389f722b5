/**
 * `x-kubernetes-embedded-resource` objects must look like resources: `apiVersion` and `kind`
 * set (kube: `Required value: must not be empty`), strings, and a parseable group/version.
 */
import { required, type FieldError } from '../validation/field-error.js';
import { invalidValue } from './messages.js';
import { isJsonMap, type SchemaNode } from './node.js';
import { childPath, itemPath } from './values.js';

/** Appends the embedded-resource errors under `value`. */
export function validateEmbedded(node: SchemaNode, value: unknown, path: string, errs: FieldError[]): void {
  if (isJsonMap(value)) {
    if (node.embeddedResource) {
      for (const k of ['apiVersion', 'kind']) {
        const v = value[k];
        const p = childPath(path, k);
        if (v === undefined || v === null || v === '') errs.push(required(p, 'must not be empty'));
        else if (typeof v !== 'string') errs.push(invalidValue(p, v, 'must be a string'));
        else if (k === 'apiVersion' && v.split('/').length > 2)
          errs.push(invalidValue(p, v, `unexpected GroupVersion string: ${v}`));
      }
    }
    for (const [k, v] of Object.entries(value)) {
      const p =
        node.properties.get(k) ??
        (node.additionalProperties === true ? undefined : node.additionalProperties);
      if (p !== undefined) validateEmbedded(p, v, childPath(path, k), errs);
    }
  } else if (Array.isArray(value) && node.items !== undefined) {
    const items = node.items;
    value.forEach((v, i) => validateEmbedded(items, v, itemPath(path, i), errs));
  }
}
