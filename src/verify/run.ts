/**
 * One run: a fresh namespace, the operations in order against the server and the model, the end
 * marker, the watches checked, the namespace deleted. A broken rule throws a {@link Violation}.
 */
import { expectRule, fromWire, revision, type RunContext, type Tolerances } from './context.js';
import type { VerifyHttp } from './http.js';
import { runList } from './lists.js';
import { Model, selected, stateMismatch, type ModelObject } from './model.js';
import { MARKER, OWNED_LABEL, SELECTORS, selectorQuery, type Op } from './ops.js';
import { VerifyError, Violation, type RuleTally } from './rules.js';
import { finishWatches, openWatch, type OpenWatch } from './watches.js';

type WriteOp = Extract<Op, { op: 'create' | 'update' }>;

function configMap(o: { name: string; value: string; tier: string }, rv?: bigint): unknown {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: o.name,
      labels: { [OWNED_LABEL]: 'true', ...(o.tier === '' ? {} : { tier: o.tier }) },
      ...(rv === undefined ? {} : { resourceVersion: String(rv) }),
    },
    data: { v: o.value },
  };
}

/** Checks a write's revision against everything shown before, then records it. */
function recordWrite(ctx: RunContext, type: 'create' | 'update', object: ModelObject): void {
  const { model } = ctx;
  expectRule(
    ctx,
    'rv-monotonic',
    object.rv > model.head,
    () =>
      `${type} ${object.name} got resourceVersion ${object.rv}, not above the previous write's ${model.head}`,
  );
  expectRule(
    ctx,
    'read-not-from-future',
    object.rv > ctx.maxRead,
    () =>
      `${type} ${object.name} got resourceVersion ${object.rv}, but an earlier read was at ${ctx.maxRead}`,
  );
  model.write(type, object);
}

async function write(ctx: RunContext, o: WriteOp): Promise<void> {
  const current = ctx.model.state.get(o.name);
  if (o.op === 'create') {
    const r = await ctx.http.send('POST', ctx.collection, configMap(o));
    if (current !== undefined) {
      expectRule(
        ctx,
        'write-status',
        r.status === 409,
        () => `create of existing ${o.name}: HTTP ${r.status}, want 409`,
      );
      return;
    }
    expectRule(ctx, 'write-status', r.status === 201, () => `create ${o.name}: HTTP ${r.status}, want 201`);
    recordWrite(ctx, 'create', fromWire('write-status', r.body));
    return;
  }
  if (current === undefined) {
    const r = await ctx.http.send('PUT', `${ctx.collection}/${o.name}`, configMap(o));
    expectRule(
      ctx,
      'write-status',
      r.status === 404,
      () => `update of missing ${o.name}: HTTP ${r.status}, want 404`,
    );
    return;
  }
  const r = await ctx.http.send('PUT', `${ctx.collection}/${o.name}`, configMap(o, current.rv));
  expectRule(ctx, 'write-status', r.status === 200, () => `update ${o.name}: HTTP ${r.status}, want 200`);
  const object = fromWire('write-status', r.body);
  if (object.rv === current.rv) {
    // An update that changes nothing is not written (no new revision, no event).
    expectRule(
      ctx,
      'rv-monotonic',
      object.value === current.value && object.labels['tier'] === current.labels['tier'],
      () => `update ${o.name} changed the object but kept resourceVersion ${object.rv}`,
    );
    return;
  }
  recordWrite(ctx, 'update', object);
}

/** A consistent list after deletes: its revision bounds the deletes', its items the new state. */
async function deleted(ctx: RunContext, names: readonly string[]): Promise<void> {
  const r = await ctx.http.send('GET', `${ctx.collection}?${selectorQuery(undefined)}`);
  expectRule(ctx, 'list-most-recent', r.status === 200, () => `HTTP ${r.status}`);
  const rv = revision('list-most-recent', r.body?.metadata?.resourceVersion);
  expectRule(
    ctx,
    'list-most-recent',
    rv >= ctx.model.head,
    () => `list at ${rv} after a delete, older than ${ctx.model.head}`,
  );
  if (rv > ctx.maxRead) ctx.maxRead = rv;
  ctx.model.delete(names, rv);
  const items = ((r.body?.items ?? []) as unknown[]).map((i) => fromWire('list-most-recent', i));
  const diff = stateMismatch(
    items,
    { base: ctx.model.state, removable: new Set(), step: ctx.model.steps.length },
    undefined,
  );
  expectRule(
    ctx,
    'list-most-recent',
    diff === undefined,
    () => `list at ${rv} after a delete: ${diff ?? ''}`,
  );
}

async function apply(ctx: RunContext, o: Op, watches: OpenWatch[]): Promise<void> {
  switch (o.op) {
    case 'create':
    case 'update':
      return write(ctx, o);
    case 'updateStale': {
      const current = ctx.model.state.get(o.name);
      if (current === undefined) return;
      const r = await ctx.http.send(
        'PUT',
        `${ctx.collection}/${o.name}`,
        configMap({ name: o.name, value: 'stale', tier: current.labels['tier'] ?? '' }, current.rv - 1n),
      );
      expectRule(ctx, 'update-conflict', r.status === 409, () => `HTTP ${r.status}, want 409`);
      return;
    }
    case 'delete': {
      const r = await ctx.http.send('DELETE', `${ctx.collection}/${o.name}`);
      if (!ctx.model.state.has(o.name)) {
        expectRule(
          ctx,
          'write-status',
          r.status === 404,
          () => `delete of missing ${o.name}: HTTP ${r.status}, want 404`,
        );
        return;
      }
      expectRule(
        ctx,
        'write-status',
        r.status === 200 || r.status === 202,
        () => `delete ${o.name}: HTTP ${r.status}`,
      );
      return deleted(ctx, [o.name]);
    }
    case 'deleteCollection': {
      const sel = SELECTORS[o.selector];
      const q = selectorQuery(sel);
      const r = await ctx.http.send('DELETE', `${ctx.collection}${q === '' ? '' : `?${q}`}`);
      expectRule(ctx, 'write-status', r.status === 200, () => `deletecollection: HTTP ${r.status}, want 200`);
      return deleted(
        ctx,
        selected(ctx.model.state, sel).map((x) => x.name),
      );
    }
    case 'list':
      return runList(ctx, o);
    case 'watch': {
      const w = await openWatch(ctx, o);
      if (w !== undefined) watches.push(w);
      return;
    }
  }
}

/** Everything a run needs from outside. */
export interface RunEnv {
  readonly http: VerifyHttp;
  readonly tally: RuleTally;
  readonly tolerances: Tolerances;
  /** Namespace of this run (created and deleted here). */
  readonly namespace: string;
  readonly unsupported: Set<string>;
}

/**
 * Runs `ops` in a fresh namespace and checks every rule.
 * @throws Violation for a broken rule; VerifyError when the server cannot be used at all.
 */
export async function executeRun(env: RunEnv, ops: readonly Op[]): Promise<void> {
  const { http } = env;
  const ns = await http.send('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: env.namespace, labels: { 'capstan.dev/verify': 'true' } },
  });
  if (ns.status !== 201)
    throw new VerifyError('VERIFY_SETUP', `cannot create namespace ${env.namespace}: HTTP ${ns.status}`);
  const collection = `/api/v1/namespaces/${env.namespace}/configmaps`;
  const watches: OpenWatch[] = [];
  try {
    const start = await http.send('GET', `${collection}?${selectorQuery(undefined)}`);
    if (start.status !== 200)
      throw new Violation('list-most-recent', `empty namespace list: HTTP ${start.status}`);
    const base = revision('list-most-recent', start.body?.metadata?.resourceVersion);
    const ctx: RunContext = {
      http,
      model: new Model(base),
      collection,
      tally: env.tally,
      tolerances: env.tolerances,
      maxRead: base,
      unsupported: env.unsupported,
    };
    for (const o of ops) await apply(ctx, o, watches);
    if (watches.length > 0) {
      await write(ctx, { op: 'create', name: MARKER, value: 'end', tier: 'a' });
      await finishWatches(ctx, watches);
    }
  } catch (err) {
    if (err instanceof Violation) env.tally.fail(err.rule);
    throw err;
  } finally {
    for (const w of watches) w.stream.close();
    await http.send('DELETE', `/api/v1/namespaces/${env.namespace}`).catch(() => undefined);
  }
}
