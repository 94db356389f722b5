/**
 * The `pod-template-hash` of a Deployment's template (the suffix of its ReplicaSets' names and a
 * label of their pods) and template equality ignoring it, as kube's `ComputeHash` and
 * `EqualIgnoreHash`. The hash is FNV-1a over the template's canonical JSON and the collision
 * count, written with kube's safe alphabet (kube hashes Go's printed struct, so the values
 * differ from kube's; the shape and use are the same).
 */
import type { PodTemplateSpec } from '../../api/types/core-v1.js';
import { cloneJson } from '../../api/object.js';

export const POD_TEMPLATE_HASH = 'pod-template-hash';

/** kube's `rand.SafeEncodeString` alphabet (no vowels, no confusable digits). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with sorted keys; empty objects and arrays omitted (they equal absent, as kube's semantic equality). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(canonical);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const c = canonical((v as Record<string, unknown>)[k]);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}

function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The hash of `template` with `collisionCount` (kube's `ComputeHash`). */
export function computeHash(
  template: PodTemplateSpec | undefined,
  collisionCount: number | undefined,
): string {
  let text = JSON.stringify(canonical(template ?? {}) ?? {});
  if (collisionCount !== undefined) text += `#${collisionCount}`;
  return [...String(fnv1a32(text))].map((c) => ALPHANUMS[c.charCodeAt(0) % ALPHANUMS.length]).join('');
}

function withoutHash(t: PodTemplateSpec | undefined): unknown {
  const copy: PodTemplateSpec = cloneJson(t ?? { metadata: {} });
  if (copy.metadata.labels !== undefined) delete copy.metadata.labels[POD_TEMPLATE_HASH];
  return canonical(copy);
}

/** Equal templates once the `pod-template-hash` label is ignored. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return JSON.stringify(withoutHash(a)) === JSON.stringify(withoutHash(b));
}
