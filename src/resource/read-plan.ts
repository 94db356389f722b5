/**
 * The resourceVersion rules of list and watch requests (the spec's "Resource version semantics"
 * table), turned into a plan the readers follow. Only option checks live here; reading is in
 * list.ts, watch.ts and the watch cache.
 *
 * List table (resourceVersionMatch × paging × resourceVersion):
 *
 * | match        | paging            | unset        | `0`                 | N              |
 * |--------------|-------------------|--------------|---------------------|----------------|
 * | unset        | no limit          | Most Recent  | Any                 | Not older than |
 * | unset        | limit, no continue| Most Recent  | Any                 | Exact          |
 * | unset        | limit + continue  | Continue     | Continue (tolerated)| 400            |
 * | Exact        | any, no continue  | 422          | 422                 | Exact          |
 * | NotOlderThan | any, no continue  | 422          | Any                 | Not older than |
 *
 * Invalid combinations other than the 400 cell are kube-apiserver's 422 `Invalid` ListOptions
 * errors, with its field messages. Watch rules (kube's ValidateListOptions): resourceVersionMatch
 * is only allowed on a watch together with `sendInitialEvents`, which in turn requires
 * `resourceVersionMatch=NotOlderThan` and `allowWatchBookmarks=true`; `sendInitialEvents` on a
 * list is forbidden.
 */
import { badRequest, invalid } from '../api/errors.js';
import { forbidden, notSupported, type FieldError } from '../validation/field-error.js';
import { boolParam, intParam, param, revisionParam, type Query } from './query.js';

/** How the read revision of a list is chosen. */
export interface ListPlan {
  /** Read exactly at this revision (Exact). */
  readonly exact?: bigint;
  /** The list must be at least this new (Not older than). */
  readonly notOlderThan?: bigint;
  /** resourceVersion `0`: any version will do (the watch cache's, if there is one). */
  readonly any?: boolean;
  readonly limit?: number;
  readonly continue?: string;
}

function listOptionsInvalid(errs: FieldError[]): never {
  throw invalid('ListOptions', 'meta.k8s.io', '', errs);
}

function checkMatchValue(match: string | undefined): void {
  if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
    listOptionsInvalid([notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', ''])]);
  }
}

/**
 * The plan of a list request.
 * @throws ApiError 400 (malformed numbers, continue with a resourceVersion other than `0`),
 *   422 (the table's other Invalid cells, `sendInitialEvents` on a list).
 */
export function planList(query: Query): ListPlan {
  // A negative limit is no limit, as in kube.
  const limit = intParam(query, 'limit');
  // A list ignores timeoutSeconds, but kube decodes it with the other options.
  intParam(query, 'timeoutSeconds');
  const cont = param(query, 'continue') || undefined;
  const rv = revisionParam(param(query, 'resourceVersion'));
  const match = param(query, 'resourceVersionMatch') || undefined;
  const paged = limit !== undefined && limit > 0 ? limit : undefined;
  checkMatchValue(match);
  if (param(query, 'sendInitialEvents') !== undefined) {
    listOptionsInvalid([forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')]);
  }
  if (cont !== undefined) {
    if (match !== undefined)
      listOptionsInvalid([
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      ]);
    // `0` with a token is tolerated (treated as the token's version); any other version is 400.
    if (rv !== undefined && rv !== 0n) {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    return { ...(paged === undefined ? {} : { limit: paged }), continue: cont };
  }
  if (match !== undefined && rv === undefined) {
    listOptionsInvalid([
      forbidden(
        'resourceVersionMatch',
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      ),
    ]);
  }
  if (match === 'Exact' && rv === 0n) {
    listOptionsInvalid([
      forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ]);
  }
  const base = paged === undefined ? {} : { limit: paged };
  if (rv === undefined) return base;
  if (rv === 0n) return { ...base, any: true };
  if (match === 'Exact' || (match === undefined && paged !== undefined)) return { ...base, exact: rv };
  return { ...base, notOlderThan: rv };
}

/** Where a watch starts, and whether it first sends the state there. */
export interface WatchPlan {
  /**
   * `latest`: a consistent read of the current revision; `any`: whatever the server has (the
   * watch cache's revision); a revision: events after it (with initial events: the state at a
   * revision not older than it).
   */
  readonly from: 'latest' | 'any' | bigint;
  /** Send the state at the start as synthetic ADDED events. */
  readonly initialEvents: boolean;
  /** Close the initial events with a BOOKMARK annotated `k8s.io/initial-events-end` (sendInitialEvents=true). */
  readonly initialEventsEnd: boolean;
  readonly bookmarks: boolean;
  /** `timeoutSeconds` when given and positive. */
  readonly timeoutSeconds?: number;
}

/** The annotation on the bookmark that ends the initial events of `sendInitialEvents=true`. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/**
 * The plan of a watch request (see the module comment for the rules).
 * @throws ApiError 400 for malformed values, 422 for kube's invalid option combinations.
 */
export function planWatch(query: Query): WatchPlan {
  const rv = revisionParam(param(query, 'resourceVersion'));
  const match = param(query, 'resourceVersionMatch') || undefined;
  checkMatchValue(match);
  const bookmarks = boolParam(query, 'allowWatchBookmarks');
  const sendText = param(query, 'sendInitialEvents');
  const timeout = intParam(query, 'timeoutSeconds');
  const timeoutPart = timeout !== undefined && timeout > 0 ? { timeoutSeconds: timeout } : {};
  if (sendText !== undefined && sendText !== '') {
    const send = boolParam(query, 'sendInitialEvents');
    const errs: FieldError[] = [];
    if (match !== 'NotOlderThan') {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!bookmarks) {
      errs.push(
        forbidden('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'),
      );
    }
    if (errs.length > 0) listOptionsInvalid(errs);
    const from = rv === undefined ? 'latest' : rv === 0n ? 'any' : rv;
    return { from, initialEvents: send, initialEventsEnd: send, bookmarks, ...timeoutPart };
  }
  if (match !== undefined) {
    listOptionsInvalid([
      forbidden(
        'resourceVersionMatch',
        'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      ),
    ]);
  }
  if (rv === undefined)
    return { from: 'latest', initialEvents: true, initialEventsEnd: false, bookmarks, ...timeoutPart };
  if (rv === 0n)
    return { from: 'any', initialEvents: true, initialEventsEnd: false, bookmarks, ...timeoutPart };
  return { from: rv, initialEvents: false, initialEventsEnd: false, bookmarks, ...timeoutPart };
}
