/**
 * The resourceVersion rules of list and watch requests (the spec's "Resource version semantics"
 * table), turned into a plan the readers follow. The options reach here checked
 * (list-options.ts); reading is in list.ts, watch.ts and the object store.
 *
 * List table (resourceVersionMatch × paging × resourceVersion):
 *
 * | match        | paging            | unset        | `0`                 | N              |
 * |--------------|-------------------|--------------|---------------------|----------------|
 * | unset        | no limit          | Most Recent  | Any                 | Not older than |
 * | unset        | limit, no continue| Most Recent  | Any                 | Exact          |
 * | unset        | continue          | Continue     | Continue (tolerated)| 400            |
 * | Exact        | any, no continue  | 422          | 422                 | Exact          |
 * | NotOlderThan | any, no continue  | 422          | Any                 | Not older than |
 *
 * The 422 cells are list-options.ts's; the 400 cell is the object store's, after it has checked
 * the token. A watch with `sendInitialEvents` starts with the state at its version as ADDED
 * events, closed by an annotated BOOKMARK when the client takes bookmarks.
 */
import type { ListOptions } from './list-options.js';
import { revisionParam } from './query.js';

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
  /**
   * A resourceVersion other than `0` came with the continue token: the object store refuses it
   * (400) once the token itself has been checked, in kube's order.
   */
  readonly versionWithContinue?: true;
}

/**
 * The plan of a list whose options were checked (list-options.ts).
 * @throws ApiError 400 for a resourceVersion that is not a number (unless a continue token came
 *   with it: see {@link ListPlan.versionWithContinue}).
 */
export function planList(options: ListOptions): ListPlan {
  // A negative limit is no limit, as in kube.
  const base = options.limit !== undefined && options.limit > 0 ? { limit: options.limit } : {};
  if (options.continue !== undefined) {
    // `0` with a token is tolerated (the token's version is read); kube compares the text.
    const other = options.resourceVersion !== undefined && options.resourceVersion !== '0';
    return { ...base, continue: options.continue, ...(other ? { versionWithContinue: true } : {}) };
  }
  const rv = revisionParam(options.resourceVersion);
  if (rv === undefined) return base;
  if (rv === 0n) return { ...base, any: true };
  const match = options.resourceVersionMatch;
  if (match === 'Exact' || (match === undefined && 'limit' in base)) return { ...base, exact: rv };
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
 * The plan of a watch whose options were checked (list-options.ts).
 * @throws ApiError 400 for a resourceVersion that is not a number, in the words of a read of one
 *   object (kube answers these 500, as an internal error of its storage).
 */
export function planWatch(options: ListOptions): WatchPlan {
  const rv = revisionParam(options.resourceVersion, '');
  const bookmarks = options.allowWatchBookmarks;
  const timeout = options.timeoutSeconds;
  const timeoutPart = timeout !== undefined && timeout > 0 ? { timeoutSeconds: timeout } : {};
  const send = options.sendInitialEvents;
  if (send !== undefined) {
    const from = rv === undefined ? 'latest' : rv === 0n ? 'any' : rv;
    // The closing bookmark goes only to a client that takes bookmarks (kube's cacher).
    return { from, initialEvents: send, initialEventsEnd: send && bookmarks, bookmarks, ...timeoutPart };
  }
  if (rv === undefined)
    return { from: 'latest', initialEvents: true, initialEventsEnd: false, bookmarks, ...timeoutPart };
  if (rv === 0n)
    return { from: 'any', initialEvents: true, initialEventsEnd: false, bookmarks, ...timeoutPart };
  return { from: rv, initialEvents: false, initialEventsEnd: false, bookmarks, ...timeoutPart };
}
