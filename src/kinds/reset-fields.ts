/**
 * kube-apiserver's reset fields (`GetResetFields` of each strategy), as data: the fields a write
 * through an endpoint cannot set (the strategy puts the stored value back), which therefore no
 * manager can own through it and which never conflict there.
 *
 * The rule for every kind with a `status` subresource: the main resource (and the namespace
 * `finalize` subresource) resets `status`; the status subresource resets `spec` plus what some
 * status strategies reset besides (upstream: pod, deployment: `statusExtras`); `scale` resets
 * nothing (it writes `spec.replicas` only). Kinds without a status subresource reset nothing.
 */
import { FieldSet, fieldElement, type Path } from '../apply/index.js';

const f = fieldElement;

const MAIN = FieldSet.fromPaths([[f('status')]]);
const STATUS = FieldSet.fromPaths([[f('spec')]]);

/** The Pod status strategy's extra reset fields. */
export const POD_STATUS_EXTRAS: readonly Path[] = [
  [f('metadata'), f('deletionTimestamp')],
  [f('metadata'), f('ownerReferences')],
];

/** The Deployment status strategy's extra reset fields. */
export const DEPLOYMENT_STATUS_EXTRAS: readonly Path[] = [[f('metadata'), f('labels')]];

/** The reset sets of one kind's endpoints (built on first use; FieldSets are immutable). */
export class ResetFields {
  readonly #hasStatus: boolean;
  readonly #statusExtras: readonly Path[];
  #status: FieldSet | undefined;

  /**
   * @param hasStatus the kind has a status subresource.
   * @param statusExtras paths the status subresource resets besides `spec`.
   */
  constructor(hasStatus: boolean, statusExtras: readonly Path[] = []) {
    this.#hasStatus = hasStatus;
    this.#statusExtras = statusExtras;
  }

  /** The fields reset by a write through `subresource` (undefined: main resource), or undefined. */
  of(subresource: string | undefined): FieldSet | undefined {
    if (!this.#hasStatus) return undefined;
    // The main resource and the namespace `finalize` subresource reset status.
    if (subresource === undefined || subresource === '' || subresource === 'finalize') return MAIN;
    if (subresource !== 'status') return undefined;
    return (this.#status ??=
      this.#statusExtras.length === 0 ? STATUS : STATUS.union(FieldSet.fromPaths(this.#statusExtras)));
  }
}
