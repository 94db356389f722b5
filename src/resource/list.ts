/**
 * list (GET on a collection without `watch`): one consistent read of the collection's key span,
 * filtered by the label and field selectors, optionally paged with `limit` and `continue`.
 *
 * resourceVersion semantics (the spec's table, kept simple and correct; the watch cache of a
 * later issue serves `0` from memory): unset and `0` read the latest revision; `N` without limit
 * means "not older than N" (the latest, or 504 when N is ahead); `N` with limit, and
 * `resourceVersionMatch=Exact`, read exactly at N (410 when compacted). A continue token carries
 * its revision, so every chunk of a paged list has the first chunk's `metadata.resourceVersion`.
 *
 * With selectors and a limit, pages are read until `limit` objects matched, each page no bigger
 * than what is still missing, so the store's continue token always resumes right after the last
 * object examined. `remainingItemCount` is omitted with selectors, as kube does.
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeyValue, RangeOptions } from '../../storage/interface.js';
import { badRequest, expired, invalid, tooLargeResourceVersion } from '../http/errors.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import {
  forbidden as fieldForbidden,
  invalid as fieldInvalid,
  type FieldError,
} from '../validation/field-error.js';
import { collectionSpan } from './keys.js';
import { decodeStored, withResourceVersion } from './object.js';
import { intParam, param, revisionParam, type Query } from './query.js';
import { Selection } from './selection.js';
import { JsonRepresentation } from '../representation/json.js';
import { StoredSource } from '../representation/source.js';
import type { Representation } from '../representation/types.js';

/** How the read revision of a list is chosen. */
interface ReadPlan {
  /** Read exactly at this revision; undefined: the latest. */
  readonly exact?: bigint;
  /** The list must be at least this new. */
  readonly notOlderThan?: bigint;
  readonly limit?: number;
  readonly continue?: string;
}

/** Kube's message for an expired continue token. */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function listOptionsInvalid(errs: FieldError[]): never {
  throw invalid('ListOptions', 'meta.k8s.io', '', errs);
}

/** Reads limit/continue/resourceVersion/resourceVersionMatch, rejecting kube's invalid combinations. */
function planRead(query: Query): ReadPlan {
  const limit = intParam(query, 'limit');
  if (limit !== undefined && limit < 0) throw badRequest(`limit must be non-negative, got ${limit}`);
  const cont = param(query, 'continue') || undefined;
  const rvText = param(query, 'resourceVersion');
  const rv = revisionParam(rvText);
  const match = param(query, 'resourceVersionMatch') || undefined;
  const paged = limit !== undefined && limit > 0 ? limit : undefined;
  if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
    listOptionsInvalid([
      fieldInvalid('resourceVersionMatch', match, 'supported values: "Exact", "NotOlderThan"'),
    ]);
  }
  if (cont !== undefined) {
    if (match !== undefined)
      listOptionsInvalid([
        fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      ]);
    if (rv !== undefined && rv !== 0n) {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    return { ...(paged === undefined ? {} : { limit: paged }), continue: cont };
  }
  if (match !== undefined && rv === undefined) {
    listOptionsInvalid([
      fieldForbidden(
        'resourceVersionMatch',
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      ),
    ]);
  }
  if (match === 'Exact' && rv === 0n) {
    listOptionsInvalid([
      fieldForbidden(
        'resourceVersionMatch',
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      ),
    ]);
  }
  const base = paged === undefined ? {} : { limit: paged };
  if (rv === undefined || rv === 0n) return base;
  if (match === 'Exact' || (match === undefined && paged !== undefined)) return { ...base, exact: rv };
  return { ...base, notOlderThan: rv };
}

/** The selected items of one list read, and where it ended. */
export interface ListPage {
  readonly items: readonly KeyValue[];
  readonly revision: bigint;
  readonly continue?: string;
  /** Items after this page (only when the read was unfiltered). */
  readonly remaining?: number;
}

/** Reads one page of the collection of `target` (see the module comment). */
export async function readPage(
  ctx: ResourceContext,
  target: Target,
  selection: Selection,
  plan: ReadPlan,
): Promise<ListPage> {
  const span = collectionSpan(target.type, target.namespace);
  const first: RangeOptions = {
    ...(plan.exact === undefined ? {} : { revision: plan.exact }),
    ...(plan.continue === undefined ? {} : { continue: plan.continue }),
  };
  if (selection.everything) {
    const res = await ctx.store.range(span, {
      ...first,
      ...(plan.limit === undefined ? {} : { limit: plan.limit }),
    });
    checkNotOlderThan(plan, res.revision);
    return {
      items: res.items,
      revision: res.revision,
      ...(res.continue === undefined
        ? {}
        : { continue: res.continue, remaining: res.count - res.items.length }),
    };
  }
  const items: KeyValue[] = [];
  let options: RangeOptions = first;
  for (;;) {
    const want = plan.limit === undefined ? undefined : plan.limit - items.length;
    const res = await ctx.store.range(span, { ...options, ...(want === undefined ? {} : { limit: want }) });
    checkNotOlderThan(plan, res.revision);
    for (const kv of res.items) {
      if (selection.matches(decodeStored(kv.value, kv.modRevision))) items.push(kv);
    }
    const done = res.continue === undefined || (plan.limit !== undefined && items.length >= plan.limit);
    if (done)
      return {
        items,
        revision: res.revision,
        ...(res.continue === undefined ? {} : { continue: res.continue }),
      };
    options = { continue: res.continue };
  }
}

function checkNotOlderThan(plan: ReadPlan, revision: bigint): void {
  if (plan.notOlderThan !== undefined && plan.notOlderThan > revision) {
    throw tooLargeResourceVersion(plan.notOlderThan, revision);
  }
}

/** The JSON of a list of `kind` from stored items. */
export function listBody(listKind: string, apiVersion: string, page: ListPage): Buffer {
  const meta: Record<string, unknown> = { resourceVersion: String(page.revision) };
  if (page.continue !== undefined) meta['continue'] = page.continue;
  if (page.remaining !== undefined) meta['remainingItemCount'] = page.remaining;
  const head = `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(meta)},"items":[`;
  const parts: Buffer[] = [Buffer.from(head)];
  page.items.forEach((kv, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(withResourceVersion(kv.value, kv.modRevision));
  });
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}

/** The body of a list page in representation `rep` (issue 5: JSON, protobuf, Table, ...). */
export function renderList(rep: Representation, page: ListPage): Uint8Array {
  return rep.list(
    {
      resourceVersion: String(page.revision),
      ...(page.continue === undefined ? {} : { continue: page.continue }),
      ...(page.remaining === undefined ? {} : { remainingItemCount: page.remaining }),
    },
    page.items.map((kv) => new StoredSource(kv.value, kv.modRevision)),
  );
}

/** GET `{collection}`: the list, in `rep` (default JSON). */
export async function listResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  rep: Representation = new JsonRepresentation(target.type),
): Promise<ResourceReply> {
  const selection = Selection.fromQuery(query, target.type);
  const plan = planRead(query);
  let page: ListPage;
  try {
    page = await readPage(ctx, target, selection, plan);
  } catch (err) {
    if (err instanceof CompactedError && plan.continue !== undefined) throw expired(CONTINUE_EXPIRED);
    if (err instanceof CompactedError) {
      throw expired(`too old resource version: ${err.requestedRevision} (${err.compactedRevision})`);
    }
    throw err;
  }
  return { code: 200, body: renderList(rep, page), contentType: rep.contentType };
}
