/**
 * kube-apiserver's reset fields (`GetResetFields` of each strategy), as data: the fields a write
 * through an endpoint cannot set (the strategy puts the stored value back), which therefore no
 * manager can own through it and which never conflict there.
 *
 * The rule for every kind with a `status` subresource: the main resource (and the namespace
 * `finalize` subresource) resets `status`; the status subresource resets `spec`; `scale` resets
 * nothing (it writes `spec.replicas` only). {@link STATUS_EXTRAS} adds what some status strategies reset
 * besides `spec` (upstream: pod, deployment). Kinds without a status subresource reset nothing.
 */
import { FieldSet, fieldElement, type Path } from '../apply/index.js';
import type { ResourceType } from '../registry/types.js';
import { hasStatusSubresource } from './metadata.js';

const f = fieldElement;

/** `group/Kind` → paths the status strategy resets besides `spec`. */
const STATUS_EXTRAS: ReadonlyMap<string, readonly Path[]> = new Map([
  [
    '/Pod',
    [
      [f('metadata'), f('deletionTimestamp')],
      [f('metadata'), f('ownerReferences')],
    ],
  ],
  ['apps/Deployment', [[f('metadata'), f('labels')]]],
]);

const MAIN = FieldSet.fromPaths([[f('status')]]);
const STATUS = FieldSet.fromPaths([[f('spec')]]);

/** Reset sets per `group/Kind|subresource` (built on first use; FieldSets are immutable). */
export class ResetFields {
  readonly #cache = new Map<string, FieldSet | null>();

  /**
   * The fields reset by a write of `type` through `subresource` (undefined: main resource), or
   * undefined when the endpoint resets none.
   */
  of(type: ResourceType, subresource: string | undefined): FieldSet | undefined {
    if (!hasStatusSubresource(type)) return undefined;
    const key = `${type.group}/${type.kind}|${subresource ?? ''}`;
    let set = this.#cache.get(key);
    if (set === undefined) {
      set = resetFieldsOf(type, subresource) ?? null;
      this.#cache.set(key, set);
    }
    return set ?? undefined;
  }
}

function resetFieldsOf(type: ResourceType, subresource: string | undefined): FieldSet | undefined {
  // The main resource and the namespace `finalize` subresource reset status.
  if (subresource === undefined || subresource === '' || subresource === 'finalize') return MAIN;
  if (subresource !== 'status') return undefined;
  const extras = STATUS_EXTRAS.get(`${type.group}/${type.kind}`);
  return extras === undefined ? STATUS : STATUS.union(FieldSet.fromPaths(extras));
}
