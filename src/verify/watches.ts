/**
 * The watch operation of a run: open a watch (from unset, 0, an earlier step's revision, a
 * list's revision or a very old one; with bookmarks, sendInitialEvents, selectors), and after the
 * run's end marker, check what it delivered against the model: the start state, every change
 * once and in order, event types as the selection saw them, bookmarks never ahead of events.
 */
import { expectRule, fromWire, revision, tooLarge, type RunContext } from './context.js';
import { eventLine, type WatchStream, type WireEvent } from './http.js';
import {
  describeObject,
  sameObject,
  selected,
  type Model,
  type ModelObject,
  type ModelSelector,
  type ModelStep,
} from './model.js';
import { MARKER, SELECTORS, selectorQuery, type Op } from './ops.js';
import { Violation, type RuleName } from './rules.js';

type WatchOp = Extract<Op, { op: 'watch' }>;

/** A watch opened during a run, checked at its end. */
export interface OpenWatch {
  readonly op: WatchOp;
  readonly stream: WatchStream;
  /** Steps done when it was opened. */
  readonly openStep: number;
  /** The step whose state its resourceVersion named (Exact starts). */
  readonly fromStep: number;
  readonly initialEvents: boolean;
  readonly bookmarks: boolean;
  readonly path: string;
  /** The resourceVersion asked for (undefined: unset). */
  readonly rv: bigint | undefined;
}

/** Opens the watch of `o`; undefined when the server refused a tolerated feature or 410ed. */
export async function openWatch(ctx: RunContext, o: WatchOp): Promise<OpenWatch | undefined> {
  const { model } = ctx;
  const sel = SELECTORS[o.selector];
  const initialEvents = o.initialEvents && o.from !== 'old' && o.from !== '0';
  const bookmarks = o.bookmarks || initialEvents;
  let rv: string | undefined;
  let fromStep = model.steps.length;
  if (o.from === '0') rv = '0';
  else if (o.from === 'point') {
    fromStep = Math.max(0, model.steps.length - o.point);
    rv = String(model.point(fromStep));
  } else if (o.from === 'old') {
    rv = '1';
    fromStep = 0;
  } else if (o.from === 'list') {
    const l = await ctx.http.send('GET', `${ctx.collection}?${selectorQuery(undefined)}`);
    expectRule(ctx, 'list-most-recent', l.status === 200, () => `HTTP ${l.status}`);
    rv = String(revision('list-most-recent', l.body?.metadata?.resourceVersion));
  }
  const q = [
    'watch=1',
    rv === undefined ? '' : `resourceVersion=${rv}`,
    bookmarks ? 'allowWatchBookmarks=true' : '',
    initialEvents ? 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan' : '',
    selectorQuery(sel),
  ].filter((p) => p !== '');
  const path = `${ctx.collection}?${q.join('&')}`;
  const stream = await ctx.http.watch(path);
  if (stream.status !== 200) {
    stream.close();
    if (
      initialEvents &&
      (stream.status === 400 || stream.status === 422) &&
      ctx.tolerances.initialEvents === 'optional'
    ) {
      ctx.unsupported.add('sendInitialEvents');
      return undefined;
    }
    if (
      o.from !== '0' &&
      o.from !== 'unset' &&
      stream.status === 504 &&
      ctx.tolerances.staleCache === 'allow'
    ) {
      ctx.unsupported.add('504 for a Not-older-than read at a revision the server returned (--stale-cache)');
      return undefined;
    }
    if (o.from === 'old' && stream.status === 410) {
      expectRule(
        ctx,
        'gone-410',
        ctx.tolerances.oldWatch !== 'replay',
        () => `a watch from 1 got 410 (--old-watch=replay)`,
      );
      return undefined;
    }
    throw new Violation('watch-status', `WATCH ${path}: HTTP ${stream.status}, want 200`);
  }
  return {
    op: o,
    stream,
    openStep: model.steps.length,
    fromStep,
    initialEvents,
    bookmarks,
    path,
    rv: rv === undefined ? undefined : BigInt(rv),
  };
}

/** Waits for the end marker on every watch, then checks each. */
export async function finishWatches(ctx: RunContext, watches: readonly OpenWatch[]): Promise<void> {
  const seen = (events: readonly WireEvent[]): boolean =>
    events.some((e) => e.type === 'ERROR' || (e.type !== 'BOOKMARK' && e.object?.metadata?.name === MARKER));
  await Promise.all(watches.map((w) => w.stream.until(seen, ctx.tolerances.watchTimeoutMs)));
  for (const w of watches) w.stream.close();
  for (const w of watches) checkWatch(ctx, w);
}

/** An expected change event. */
interface Expected {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: ModelObject;
  readonly step: ModelStep;
}

/** The events a selection sees of a step. */
function expectedOf(step: ModelStep, sel: ModelSelector | undefined, skip: ReadonlySet<string>): Expected[] {
  const out: Expected[] = [];
  const m = (o: ModelObject): boolean => sel === undefined || sel.matches(o);
  for (const c of step.changes) {
    if (skip.has(c.name)) continue;
    if (c.type === 'delete') {
      if (m(c.object)) out.push({ type: 'DELETED', object: c.object, step });
      continue;
    }
    const before = c.prev !== undefined && m(c.prev);
    const now = m(c.object);
    if (now) out.push({ type: before ? 'MODIFIED' : 'ADDED', object: c.object, step });
    else if (before && c.prev !== undefined)
      out.push({ type: 'DELETED', object: { ...c.prev, rv: step.hi }, step });
  }
  return out;
}

interface Mismatch {
  readonly at: number;
  readonly rule: RuleName;
  readonly message: string;
}

/** Matches `events[from..]` against the steps after `start`, `skip` already gone from step start+1. */
function matchChanges(
  model: Model,
  events: readonly WireEvent[],
  from: number,
  start: number,
  startRv: bigint,
  sel: ModelSelector | undefined,
  skip: ReadonlySet<string>,
): Mismatch | undefined {
  let pos = from;
  let last = startRv;
  for (let s = start; s < model.steps.length; s++) {
    const step = model.steps[s] as ModelStep;
    const want = expectedOf(step, sel, s === start ? skip : new Set());
    const pending = new Map(want.map((w) => [w.object.name, w]));
    for (let n = 0; n < want.length; n++, pos++) {
      const e = events[pos];
      const next = want[n] as Expected;
      if (e === undefined)
        return {
          at: pos,
          rule: 'watch-no-loss-no-dup',
          message: `missing ${next.type} ${describeObject(next.object)} (the stream ended or stalled)`,
        };
      if (e.type === 'BOOKMARK' || e.type === 'ERROR')
        return { at: pos, rule: 'watch-no-loss-no-dup', message: `unexpected ${eventLine(e)}` };
      let got: ModelObject;
      try {
        got = fromWire('watch-no-loss-no-dup', e.object);
      } catch (err) {
        return { at: pos, rule: 'watch-no-loss-no-dup', message: (err as Error).message };
      }
      const w = pending.get(got.name);
      if (w === undefined)
        return {
          at: pos,
          rule: 'watch-no-loss-no-dup',
          message: `got ${eventLine(e)}, want ${next.type} ${describeObject(next.object)}`,
        };
      if (got.rv <= last)
        return { at: pos, rule: 'watch-order', message: `${eventLine(e)} after an event at ${last}` };
      if (e.type !== w.type)
        return {
          at: pos,
          rule: 'watch-event-type',
          message: `got ${eventLine(e)}, want ${w.type} ${describeObject(w.object)}`,
        };
      const rvOk = step.exact ? got.rv === step.hi : got.rv > step.lo && got.rv <= step.hi;
      if (!sameObject(got, w.object, false) || !rvOk || (w.type !== 'DELETED' && got.rv !== w.object.rv))
        return {
          at: pos,
          rule: 'watch-no-loss-no-dup',
          message: `got ${eventLine(e)}, want ${w.type} ${describeObject(w.object)}`,
        };
      pending.delete(got.name);
      last = got.rv;
    }
  }
  const extra = events[pos];
  if (extra !== undefined)
    return {
      at: pos,
      rule: 'watch-no-loss-no-dup',
      message: `unexpected ${eventLine(extra)} after the end marker`,
    };
  return undefined;
}

/** Matches synthetic ADDED events `init` against the state after step `i` (partly into step i+1). */
function matchInitial(
  model: Model,
  init: readonly WireEvent[],
  i: number,
  sel: ModelSelector | undefined,
): { skip: Set<string>; maxRv: bigint } | Mismatch {
  const want = new Map(selected(model.stateAfter(i), sel).map((o) => [o.name, o]));
  const next = model.steps[i];
  const removable =
    next !== undefined && !next.exact ? new Set(next.changes.map((c) => c.name)) : new Set<string>();
  let maxRv = model.point(i);
  for (const [n, e] of init.entries()) {
    if (e.type !== 'ADDED')
      return { at: n, rule: 'watch-start-state', message: `${eventLine(e)} among the initial events` };
    let got: ModelObject;
    try {
      got = fromWire('watch-start-state', e.object);
    } catch (err) {
      return { at: n, rule: 'watch-start-state', message: (err as Error).message };
    }
    const w = want.get(got.name);
    if (w === undefined || !sameObject(got, w))
      return {
        at: n,
        rule: 'watch-start-state',
        message: `initial ${eventLine(e)}: not in the state after step ${i}`,
      };
    want.delete(got.name);
    if (got.rv > maxRv) maxRv = got.rv;
  }
  const skip = new Set<string>();
  for (const name of want.keys()) {
    if (!removable.has(name))
      return { at: init.length, rule: 'watch-start-state', message: `no initial ADDED for ${name}` };
    skip.add(name);
  }
  return { skip, maxRv };
}

function isMismatch(v: unknown): v is Mismatch {
  return typeof v === 'object' && v !== null && 'rule' in v;
}

/** Checks one finished watch. */
function checkWatch(ctx: RunContext, w: OpenWatch): void {
  const { model } = ctx;
  const sel = SELECTORS[w.op.selector];
  const all = w.stream.events;
  const where = `WATCH ${w.path}`;
  const first = all[0];
  if (first?.type === 'ERROR') {
    const code = first.object?.code;
    if (w.op.from === 'old' && code === 410) {
      expectRule(
        ctx,
        'gone-410',
        ctx.tolerances.oldWatch !== 'replay',
        () => `${where}: 410 (--old-watch=replay)`,
      );
      return;
    }
    if (
      w.rv !== undefined &&
      w.rv > 1n &&
      tooLarge(code ?? 0, first.object) &&
      ctx.tolerances.staleCache === 'allow'
    ) {
      ctx.unsupported.add('504 for a Not-older-than read at a revision the server returned (--stale-cache)');
      return;
    }
    throw new Violation(code === 410 ? 'gone-410' : 'watch-status', `${where}: ${eventLine(first)}`);
  }
  if (w.op.from === 'old')
    expectRule(
      ctx,
      'gone-410',
      ctx.tolerances.oldWatch !== 'gone',
      () => `${where}: replayed (--old-watch=gone)`,
    );
  // Bookmarks: only when asked, only a resourceVersion, never ahead of a later event.
  let endBookmark = -1;
  for (const [n, e] of all.entries()) {
    if (e.type === 'UNPARSABLE' || e.type === 'ERROR')
      throw new Violation('watch-status', `${where}: ${eventLine(e)} at ${n}`);
    if (e.type !== 'BOOKMARK') continue;
    expectRule(ctx, 'watch-bookmark', w.bookmarks, () => `${where}: a bookmark without allowWatchBookmarks`);
    const meta = (e.object as { metadata?: Record<string, unknown> } | undefined)?.metadata ?? {};
    const b = revision('watch-bookmark', meta['resourceVersion']);
    expectRule(
      ctx,
      'watch-bookmark',
      meta['name'] === undefined || meta['name'] === '',
      () => `${where}: bookmark object with a name`,
    );
    const annotations = (meta['annotations'] ?? {}) as Record<string, string>;
    if (annotations['k8s.io/initial-events-end'] === 'true' && endBookmark < 0) endBookmark = n;
    const ahead = all
      .slice(n + 1)
      .find(
        (x) =>
          x.type !== 'BOOKMARK' &&
          /^[0-9]+$/.test(x.object?.metadata?.resourceVersion ?? '') &&
          BigInt(x.object?.metadata?.resourceVersion ?? '0') <= b,
      );
    expectRule(
      ctx,
      'watch-bookmark',
      ahead === undefined,
      () => `${where}: bookmark at ${b} before ${eventLine(ahead as WireEvent)}`,
    );
  }
  const events = all.filter((e, n) => e.type !== 'BOOKMARK' || n === endBookmark);
  const markerSeen = all.some((e) => e.type !== 'BOOKMARK' && e.object?.metadata?.name === MARKER);
  let candidates: { i: number; counts: number[] }[];
  if (w.initialEvents) {
    const split = events.findIndex((e) => e.type === 'BOOKMARK');
    expectRule(
      ctx,
      'watch-initial-events-end',
      split >= 0,
      () => `${where}: no k8s.io/initial-events-end bookmark`,
    );
    const lo = w.op.from === 'point' ? w.fromStep : w.openStep;
    candidates = range(lo, model.steps.length).map((i) => ({ i, counts: [split] }));
  } else if (w.op.from === 'unset' || w.op.from === '0') {
    const lo = w.op.from === '0' || ctx.tolerances.unsetWatch === 'any' ? 0 : w.openStep;
    candidates = range(lo, model.steps.length).map((i) => {
      const n = selected(model.stateAfter(i), sel).length;
      return { i, counts: range(0, n).map((k) => n - k) };
    });
  } else {
    candidates = [
      { i: w.op.from === 'point' ? w.fromStep : w.op.from === 'old' ? 0 : w.openStep, counts: [0] },
    ];
  }
  let best: Mismatch | undefined;
  for (const { i, counts } of candidates) {
    for (const k of counts) {
      const synthetic = w.initialEvents || w.op.from === 'unset' || w.op.from === '0';
      const init = synthetic
        ? matchInitial(model, events.slice(0, k), i, sel)
        : { skip: new Set<string>(), maxRv: w.rv ?? 0n };
      let m: Mismatch | undefined;
      if (isMismatch(init)) m = init;
      else {
        const after = w.initialEvents ? k + 1 : k;
        if (w.initialEvents) {
          const b = revision('watch-initial-events-end', events[k]?.object?.metadata?.resourceVersion);
          if (b < init.maxRv)
            m = {
              at: k,
              rule: 'watch-initial-events-end',
              message: `initial-events-end at ${b}, below an initial event's ${init.maxRv}`,
            };
        }
        m ??= matchChanges(model, events, after, i, w.initialEvents ? 0n : init.maxRv, sel, init.skip);
      }
      if (m === undefined) {
        for (const r of ['watch-no-loss-no-dup', 'watch-order', 'watch-event-type'] as const)
          ctx.tally.check(r);
        ctx.tally.check(
          w.op.from === 'unset' || w.op.from === '0' ? 'watch-start-state' : 'watch-exact-start',
        );
        return;
      }
      if (best === undefined || m.at > best.at) best = m;
    }
  }
  const b = best as Mismatch;
  if (!markerSeen && b.rule === 'watch-no-loss-no-dup' && b.at >= events.length)
    throw new Violation(
      'watch-delivery',
      `${where}: the end marker did not arrive in ${ctx.tolerances.watchTimeoutMs} ms; ${b.message}`,
    );
  const exactStart = w.op.from === 'point' || w.op.from === 'list' || w.op.from === 'old';
  const rule: RuleName =
    exactStart && !w.initialEvents && b.at === 0 && events[0]?.type === 'ADDED'
      ? 'watch-exact-start'
      : b.rule;
  ctx.tally.check(rule);
  throw new Violation(rule, `${where}: event ${b.at + 1}: ${b.message}`);
}

function range(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let i = lo; i <= hi; i++) out.push(i);
  return out;
}
