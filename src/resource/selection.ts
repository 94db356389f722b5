/**
 * The label and field selectors of a list, watch or deletecollection request, as one predicate
 * (read from the request by list-options.ts).
 */
import type { FieldSelector } from './field-selector.js';
import type { LabelSelector } from './label-selector.js';
import type { KubeObject } from '../api/object.js';

/** Label selector and field selector together; `everything` lets callers skip parsing objects. */
export class Selection {
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;

  constructor(labels: LabelSelector, fields: FieldSelector) {
    this.labels = labels;
    this.fields = fields;
  }

  /** True when everything is selected (no parse of objects needed). */
  get everything(): boolean {
    return this.labels.empty && this.fields.empty;
  }

  matches(obj: KubeObject): boolean {
    return this.labels.matches(obj.metadata.labels) && this.fields.matches(obj);
  }
}
