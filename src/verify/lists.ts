/**
 * The list operation of a run: the spec's list table (resourceVersion × resourceVersionMatch ×
 * paging) checked against the model, chunk by chunk.
 */
import { expectRule, fromWire, revision, tooLarge, type RunContext } from './context.js';
import { compareNames, selected, stateMismatch, type ModelObject, type ModelSelector } from './model.js';
import type { KubeJson } from './http.js';
import { SELECTORS, selectorQuery, type Op } from './ops.js';
import { Violation, type RuleName } from './rules.js';

type ListOp = Extract<Op, { op: 'list' }>;

/** What the table makes of a request. */
type Semantics = 'invalid' | 'most-recent' | 'any' | 'not-older-than' | 'exact' | 'too-large';

function semantics(
  rv: string | undefined,
  match: ListOp['match'],
  limit: number,
  future: boolean,
): Semantics {
  if (match === 'Exact') return rv === undefined || rv === '0' ? 'invalid' : future ? 'too-large' : 'exact';
  if (match === 'NotOlderThan') {
    if (rv === undefined) return 'invalid';
    return rv === '0' ? 'any' : future ? 'too-large' : 'not-older-than';
  }
  if (rv === undefined) return 'most-recent';
  if (rv === '0') return 'any';
  if (future) return 'too-large';
  return limit > 0 ? 'exact' : 'not-older-than';
}

const RULE_OF: Record<Exclude<Semantics, 'invalid' | 'too-large'>, RuleName> = {
  'most-recent': 'list-most-recent',
  any: 'list-any',
  'not-older-than': 'list-not-older-than',
  exact: 'list-exact',
};

function query(parts: (string | undefined)[]): string {
  const q = parts.filter((p) => p !== undefined && p !== '').join('&');
  return q === '' ? '' : `?${q}`;
}

/** Runs one list operation and checks it. */
export async function runList(ctx: RunContext, o: ListOp): Promise<void> {
  const { model } = ctx;
  const sel = SELECTORS[o.selector];
  let rv: string | undefined;
  let match = o.match;
  let limit = o.limit;
  if (o.rv === '0') rv = '0';
  else if (o.rv === 'point') rv = String(model.point(Math.max(0, model.steps.length - o.point)));
  else if (o.rv === 'old') {
    rv = '1';
    match = 'Exact';
  } else if (o.rv === 'future') {
    rv = String(model.maxSeen + 1_000_000n);
    match = '';
    limit = 0;
  }
  let sem = semantics(rv, match, limit, o.rv === 'future');
  const singleName = sel?.field?.startsWith('metadata.name=') === true;
  if (sem === 'exact' && singleName && ctx.tolerances.nameSelectorGet === 'allow') sem = 'not-older-than';
  const params = [
    rv === undefined ? undefined : `resourceVersion=${rv}`,
    match === '' ? undefined : `resourceVersionMatch=${match}`,
    limit > 0 ? `limit=${limit}` : undefined,
    selectorQuery(sel),
  ];
  const first = await ctx.http.send('GET', ctx.collection + query(params));
  if (sem === 'invalid') {
    expectRule(
      ctx,
      'invalid-combination',
      first.status === 400 || first.status === 422,
      () => `rv=${rv ?? 'unset'} match=${match}: HTTP ${first.status}, want 400 or 422`,
    );
    return;
  }
  if (sem === 'too-large') {
    const message = first.body?.message ?? '';
    expectRule(
      ctx,
      'too-large-rv',
      first.status === 504 && message.includes('Too large resource version'),
      () => `HTTP ${first.status} ${JSON.stringify(message)}, want 504 "Too large resource version"`,
    );
    return;
  }
  const rule = RULE_OF[sem];
  if (
    sem === 'not-older-than' &&
    tooLarge(first.status, first.body) &&
    ctx.tolerances.staleCache === 'allow'
  ) {
    ctx.unsupported.add('504 for a Not-older-than read at a revision the server returned (--stale-cache)');
    return;
  }
  if (o.rv === 'old' && first.status === 410) {
    expectRule(ctx, 'gone-410', first.body?.code === 410, () => `410 without a Status body of code 410`);
    return;
  }
  expectRule(ctx, rule, first.status === 200, () => `HTTP ${first.status}, want 200`);
  const listRv = revision(rule, first.body?.metadata?.resourceVersion);
  if (listRv > ctx.maxRead) ctx.maxRead = listRv;
  if (sem === 'most-recent')
    expectRule(
      ctx,
      rule,
      listRv >= model.head,
      () => `list at ${listRv}, older than the last write's ${model.head}`,
    );
  if (sem === 'not-older-than')
    expectRule(
      ctx,
      rule,
      listRv >= BigInt(rv ?? '0'),
      () => `list at ${listRv}, older than the requested ${rv}`,
    );
  if (sem === 'exact')
    expectRule(ctx, rule, listRv === BigInt(rv ?? '0'), () => `list at ${listRv}, want exactly ${rv}`);

  const items = await readPages(ctx, first.body, listRv, limit, sel, sem, o.probeContinue, rv);
  const names = items.map((i) => i.name);
  expectRule(
    ctx,
    'list-order',
    names.every((n, i) => i === 0 || compareNames(names[i - 1] ?? '', n) < 0),
    () => `items not in strictly increasing name order: ${names.join(', ')}`,
  );
  if (sel !== undefined) {
    const stray = items.find((i) => !sel.matches(i));
    expectRule(
      ctx,
      'list-selector',
      stray === undefined,
      () => `${stray?.name ?? ''} does not match the selector`,
    );
  }
  const diff = stateMismatch(items, model.at(listRv), sel);
  expectRule(ctx, rule, diff === undefined, () => `items at ${listRv}: ${diff ?? ''}`);
}

/** Reads every chunk after `first`, checking the chunk rules; returns all items. */
async function readPages(
  ctx: RunContext,
  first: KubeJson | undefined,
  listRv: bigint,
  limit: number,
  sel: ModelSelector | undefined,
  sem: Semantics,
  probe: boolean,
  rv: string | undefined,
): Promise<ModelObject[]> {
  const rule: RuleName = sem === 'exact' ? 'list-exact' : sem === 'any' ? 'list-any' : 'list-most-recent';
  const total = selected(ctx.model.at(listRv).base, sel).length;
  const items: ModelObject[] = [];
  let page = first;
  let pageNo = 0;
  for (;;) {
    const pageItems = ((page?.items ?? []) as unknown[]).map((i) => fromWire(rule, i));
    items.push(...pageItems);
    const cont = page?.metadata?.continue ?? '';
    const ignoredLimit = sem === 'any' && pageNo === 0 && cont === '' && pageItems.length > limit;
    if (limit > 0) {
      const tolerated = ignoredLimit && ctx.tolerances.anyLimit !== 'honor';
      expectRule(
        ctx,
        'page-size',
        pageItems.length <= limit || tolerated,
        () =>
          `${pageItems.length} items in a chunk of limit=${limit}${ignoredLimit ? ' (resourceVersion=0 ignoring the limit: --any-limit=honor)' : ''}`,
      );
      if (sem === 'any' && ctx.tolerances.anyLimit === 'ignore' && cont !== '')
        throw new Violation('page-size', 'resourceVersion=0 honoured the limit (--any-limit=ignore)');
    } else {
      expectRule(ctx, 'page-size', cont === '', () => `a continue token on a list without limit`);
    }
    const remaining = page?.metadata?.remainingItemCount;
    if (remaining !== undefined && remaining !== null) {
      expectRule(
        ctx,
        'remaining-count',
        sel === undefined && cont !== '',
        () =>
          `remainingItemCount ${String(remaining)} on a ${sel === undefined ? 'last chunk' : 'selector list'}`,
      );
      expectRule(
        ctx,
        'remaining-count',
        Number(remaining) === total - items.length || sel !== undefined,
        () => `remainingItemCount ${String(remaining)}, want ${total - items.length}`,
      );
    }
    if (sel === undefined && limit > 0 && !ignoredLimit) {
      expectRule(ctx, 'page-size', (cont !== '') === items.length < total, () =>
        cont === ''
          ? `no continue token after ${items.length} of ${total} items`
          : `a continue token after all ${total} items`,
      );
    }
    if (cont === '') return items;
    if (probe && pageNo === 0) await probeContinue(ctx, cont, listRv, limit, sel, rv);
    pageNo++;
    const next = await ctx.http.send(
      'GET',
      `${ctx.collection}?limit=${limit}&continue=${encodeURIComponent(cont)}&${selectorQuery(sel)}`,
    );
    expectRule(ctx, 'page-consistent', next.status === 200, () => `chunk ${pageNo + 1}: HTTP ${next.status}`);
    const pageRv = revision('page-consistent', next.body?.metadata?.resourceVersion);
    expectRule(
      ctx,
      'page-consistent',
      pageRv === listRv,
      () => `chunk ${pageNo + 1} at ${pageRv}, the first at ${listRv}`,
    );
    if (pageNo > 1000) throw new Violation('page-size', 'more than 1000 chunks');
    page = next.body;
  }
}

/** The second chunk asked with resourceVersion=0 (served as the token) and with a revision (400). */
async function probeContinue(
  ctx: RunContext,
  cont: string,
  listRv: bigint,
  limit: number,
  sel: ModelSelector | undefined,
  rv: string | undefined,
): Promise<void> {
  const base = `${ctx.collection}?limit=${limit}&continue=${encodeURIComponent(cont)}&${selectorQuery(sel)}`;
  const zero = await ctx.http.send('GET', `${base}&resourceVersion=0`);
  expectRule(ctx, 'continue-rv-zero', zero.status === 200, () => `HTTP ${zero.status}, want 200`);
  const zeroRv = revision('continue-rv-zero', zero.body?.metadata?.resourceVersion);
  expectRule(ctx, 'continue-rv-zero', zeroRv === listRv, () => `chunk at ${zeroRv}, the first at ${listRv}`);
  const other = await ctx.http.send(
    'GET',
    `${base}&resourceVersion=${rv !== undefined && rv !== '0' ? rv : String(listRv)}`,
  );
  expectRule(ctx, 'continue-rv-400', other.status === 400, () => `HTTP ${other.status}, want 400`);
}
