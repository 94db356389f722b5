/**
 * The options of a list, watch or deletecollection request (kube's ListOptions), read and checked
 * in kube-apiserver v1.33's order, so that a request with several faults is refused for the
 * one kube names:
 *
 * 1. decoded: `timeoutSeconds`, then `limit`, as integers (400, Go's strconv errors);
 * 2. the label selector, then the field selector, parsed (400);
 * 3. the options checked against each other (422 Invalid ListOptions, every fault at once, in
 *    kube's ValidateListOptions order; the WatchList feature taken as enabled, since Capstan
 *    serves `sendInitialEvents`);
 * 4. the field selector's fields checked against the kind (400).
 *
 * The resourceVersion is parsed last, by the plan of the read (read-plan.ts). With a continue
 * token it is never parsed: the object store checks the token first, then refuses any version
 * other than `0`, as kube's storage does.
 */
import { invalid } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { forbidden, notSupported, type FieldError } from '../validation/field-error.js';
import { FieldSelector, parseFieldTerms } from './field-selector.js';
import { LabelSelector } from './label-selector.js';
import { boolParam, intParam, param, type Query } from './query.js';
import { Selection } from './selection.js';

/** The list options of a request as decoded; empty strings are unset, as kube reads them. */
export interface ListOptions {
  /** The version as given (unparsed: see the module comment). */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
  readonly continue?: string;
  readonly limit?: number;
  readonly timeoutSeconds?: number;
  /** Present (even empty) when the parameter is: kube's `*bool`. */
  readonly sendInitialEvents?: boolean;
  readonly allowWatchBookmarks: boolean;
}

/** A collection request's options with its selection, both checked. */
export interface CollectionRequest {
  readonly options: ListOptions;
  readonly selection: Selection;
}

/**
 * Reads the options and selectors of a collection request in kube's order (see the module
 * comment); `selectable`: a custom resource's selectable fields (see {@link FieldSelector.bind}).
 * @throws ApiError 400 (malformed integers or selectors, a field the kind does not select on),
 *   422 (options kube refuses together).
 */
export function readCollectionRequest(
  query: Query,
  type: Pick<ResourceType, 'group' | 'kind'>,
  selectable: readonly string[] | undefined,
  watch: boolean,
): CollectionRequest {
  const options = decodeListOptions(query);
  const labels = LabelSelector.parse(param(query, 'labelSelector'));
  const fieldTerms = parseFieldTerms(param(query, 'fieldSelector'));
  const errs = watch ? watchOptionErrors(options) : listOptionErrors(options);
  if (errs.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', errs);
  return { options, selection: new Selection(labels, FieldSelector.bind(fieldTerms, type, selectable)) };
}

function decodeListOptions(query: Query): ListOptions {
  const timeoutSeconds = intParam(query, 'timeoutSeconds');
  const limit = intParam(query, 'limit');
  const text = (name: string): string | undefined => param(query, name) || undefined;
  const resourceVersion = text('resourceVersion');
  const resourceVersionMatch = text('resourceVersionMatch');
  const cont = text('continue');
  return {
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(resourceVersionMatch === undefined ? {} : { resourceVersionMatch }),
    ...(cont === undefined ? {} : { continue: cont }),
    ...(limit === undefined ? {} : { limit }),
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    // Present even when empty (then true, as kube's conversion of a `*bool` reads it).
    ...(param(query, 'sendInitialEvents') === undefined
      ? {}
      : { sendInitialEvents: boolParam(query, 'sendInitialEvents') }),
    allowWatchBookmarks: boolParam(query, 'allowWatchBookmarks'),
  };
}

function listOptionErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (match !== undefined) {
    if (o.resourceVersion === undefined) {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (o.continue !== undefined) {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && o.resourceVersion === '0') {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (o.sendInitialEvents !== undefined) {
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  return errs;
}

function watchOptionErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(
      forbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  }
  if (match !== undefined) {
    if (o.sendInitialEvents === undefined) {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (o.continue !== undefined) {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
  }
  return errs;
}
