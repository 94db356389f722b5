/**
 * The label and field selectors of a list, watch or deletecollection request, as one predicate.
 */
import type { ResourceType } from '../registry/types.js';
import { FieldSelector } from './field-selector.js';
import { LabelSelector } from './label-selector.js';
import type { KubeObject } from '../api/object.js';
import { param, type Query } from './query.js';

/** Label selector and field selector together; `everything` lets callers skip parsing objects. */
export class Selection {
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;

  constructor(labels: LabelSelector, fields: FieldSelector) {
    this.labels = labels;
    this.fields = fields;
  }

  /**
   * The selection of `labelSelector` and `fieldSelector` in `query` for `type` (`selectable`:
   * a custom resource's selectable fields, undefined for a built-in kind; see
   * {@link FieldSelector.parse}).
   * @throws ApiError 400 for a malformed selector or an unsupported field.
   */
  static fromQuery(
    query: Query,
    type: Pick<ResourceType, 'group' | 'kind'>,
    selectable?: readonly string[],
  ): Selection {
    return new Selection(
      LabelSelector.parse(param(query, 'labelSelector')),
      FieldSelector.parse(param(query, 'fieldSelector'), type, selectable),
    );
  }

  /** True when everything is selected (no parse of objects needed). */
  get everything(): boolean {
    return this.labels.empty && this.fields.empty;
  }

  matches(obj: KubeObject): boolean {
    return this.labels.matches(obj.metadata.labels) && this.fields.matches(obj);
  }
}
