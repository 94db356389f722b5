/**
 * The `rbac/bootstrap-roles` post-start hook: creates the bootstrap policy's objects that are
 * missing and reconciles the others as kube-apiserver does: missing labels, annotations, rules
 * (by coverage) and aggregation selectors are added to roles, missing subjects to bindings, a
 * binding whose roleRef changed is recreated; objects annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "false"` are left alone.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/interface.js';
import { ConflictError, AlreadyExistsError } from '../../storage/errors.js';
import { encodeForStorage, rfc3339Seconds, type KubeObject } from '../api/object.js';
import { AUTOUPDATE_ANNOTATION, type PolicyObject } from './bootstrap-policy.js';
import { uncoveredRules } from './covers.js';
import type { LabelSelector } from './rbac-index.js';
import type { PolicyRule, Subject } from './rbac-rules.js';

const decoder = new TextDecoder();

/** Storage key of a policy object. */
export function policyKey(p: Pick<PolicyObject, 'resource' | 'namespace' | 'name'>): string {
  return p.namespace === '' ? `/${p.resource}/${p.name}` : `/${p.resource}/${p.namespace}/${p.name}`;
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** The reconciled object, or undefined when `existing` needs no change (or must be recreated: 'recreate'). */
export function reconciled(
  expected: PolicyObject,
  existing: KubeObject,
): KubeObject | undefined | 'recreate' {
  const annotations = existing.metadata.annotations ?? {};
  if (annotations[AUTOUPDATE_ANNOTATION] === 'false') return undefined;
  const want = expected.object;
  const next = structuredClone(existing) as KubeObject & Record<string, unknown>;
  let changed = false;
  const labels = { ...want.metadata.labels, ...(existing.metadata.labels ?? {}) };
  const ann = { ...want.metadata.annotations, ...annotations };
  if (JSON.stringify(labels) !== JSON.stringify(existing.metadata.labels ?? {})) changed = true;
  if (JSON.stringify(ann) !== JSON.stringify(annotations)) changed = true;
  next.metadata = { ...next.metadata, labels, annotations: ann };
  if (expected.resource === 'clusterroles' || expected.resource === 'roles') {
    const wantAgg = want['aggregationRule'] as { clusterRoleSelectors: LabelSelector[] } | undefined;
    if (wantAgg !== undefined) {
      const have =
        (existing['aggregationRule'] as { clusterRoleSelectors?: LabelSelector[] } | undefined)
          ?.clusterRoleSelectors ?? [];
      const missing = wantAgg.clusterRoleSelectors.filter(
        (s) => !have.some((h) => JSON.stringify(h) === JSON.stringify(s)),
      );
      if (missing.length > 0) {
        next['aggregationRule'] = { clusterRoleSelectors: [...have, ...missing] };
        changed = true;
      }
    } else {
      const have = (existing['rules'] as PolicyRule[] | undefined) ?? [];
      const wantRules = (want['rules'] as PolicyRule[] | undefined) ?? [];
      const add = wantRules.filter((r) => uncoveredRules(have, [r]).length > 0);
      if (add.length > 0) {
        next['rules'] = [...have, ...add];
        changed = true;
      }
    }
  } else {
    const ref = JSON.stringify(existing['roleRef']);
    if (ref !== JSON.stringify(want['roleRef'])) return 'recreate';
    const have = (existing['subjects'] as Subject[] | undefined) ?? [];
    const wantSubjects = (want['subjects'] as Subject[] | undefined) ?? [];
    const add = wantSubjects.filter((s) => !have.some((h) => sameSubject(h, s)));
    if (add.length > 0) {
      next['subjects'] = [...have, ...add];
      changed = true;
    }
  }
  return changed ? next : undefined;
}

function fresh(p: PolicyObject, now: Date): KubeObject {
  return {
    ...structuredClone(p.object),
    metadata: {
      ...structuredClone(p.object.metadata),
      uid: randomUUID(),
      creationTimestamp: rfc3339Seconds(now),
    },
  };
}

/**
 * Creates or reconciles every object of `policy` in `store` (the handlers' JSON store). Retries
 * an object whose write lost a race. The objects are independent, so they are reconciled
 * concurrently: the embedded store commits concurrent writes together (one synced batch instead
 * of one per object), which keeps this post-start hook, and so `/healthz` and `/readyz` of a
 * fresh server, short. Resolves with the number of objects written; rejects with the first error
 * once every object was tried.
 */
export async function reconcilePolicy(
  store: Store,
  policy: readonly PolicyObject[],
  now: () => Date,
): Promise<number> {
  const outcomes = await Promise.allSettled(policy.map((p) => reconcileOne(store, p, now)));
  let written = 0;
  for (const o of outcomes) {
    if (o.status === 'rejected') throw o.reason;
    if (o.value) written++;
  }
  return written;
}

/** Creates or reconciles one object; true when it was written. */
async function reconcileOne(store: Store, p: PolicyObject, now: () => Date): Promise<boolean> {
  const key = policyKey(p);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const { kv } = await store.get(key);
      if (kv === undefined) {
        await store.create(key, encodeForStorage(fresh(p, now())));
        return true;
      }
      const existing = JSON.parse(decoder.decode(kv.value)) as KubeObject;
      const next = reconciled(p, existing);
      if (next === undefined) return false;
      if (next === 'recreate') {
        await store.delete(key, { ifModRevision: kv.modRevision });
        continue;
      }
      await store.update(key, encodeForStorage(next), { ifModRevision: kv.modRevision });
      return true;
    } catch (err) {
      if (err instanceof ConflictError || err instanceof AlreadyExistsError) continue;
      throw err;
    }
  }
  return false;
}
