/**
 * The annotations a Deployment and its ReplicaSets carry, as kube's: `deployment.kubernetes.io/
 * revision` (which rollout a ReplicaSet is; `kubectl rollout history/undo` read it),
 * `revision-history` (earlier revisions a reused ReplicaSet had), `desired-replicas` and
 * `max-replicas` (the Deployment's size and size plus surge when the ReplicaSet was last
 * scaled, for proportional scaling), and the Deployment's own annotations copied onto its new
 * ReplicaSet.
 */
import { LAST_APPLIED_CONFIG_ANNOTATION } from '../../api/annotations.js';
import type { Deployment, ReplicaSet } from '../../api/types/apps-v1.js';
import { desired, maxSurge } from './replicas.js';

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** The deprecated extensions/v1beta1 rollback request. */
export const ROLLBACK_TO = 'deprecated.deployment.rollback.to';

/** Deployment annotations never copied to ReplicaSets. */
const NOT_COPIED = new Set([
  LAST_APPLIED_CONFIG_ANNOTATION,
  REVISION,
  REVISION_HISTORY,
  DESIRED_REPLICAS,
  MAX_REPLICAS,
  ROLLBACK_TO,
]);

/**
 * A revision annotation's value (0 when absent or malformed). Revisions are int64 in kube, and
 * any value may have been set by hand: they are read as bigints, never as doubles, which lose
 * the last digits of large ones.
 */
function parseRevision(text: string | undefined): bigint {
  return text !== undefined && REVISION_TEXT.test(text) ? BigInt(text) : 0n;
}

/** An int64 in decimal (strconv.ParseInt's form, near enough). */
const REVISION_TEXT = /^[-+]?[0-9]{1,19}$/;

/** The revision of a ReplicaSet (0 when absent or malformed). */
export function revisionOf(rs: ReplicaSet | Deployment | undefined): bigint {
  return parseRevision(rs?.metadata.annotations?.[REVISION]);
}

/** The highest revision among `rss`. */
export function maxRevision(rss: readonly ReplicaSet[]): bigint {
  return rss.reduce((m, rs) => {
    const r = revisionOf(rs);
    return r > m ? r : m;
  }, 0n);
}

/** Orders ReplicaSets by revision, lowest first. */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  return ra < rb ? -1 : ra > rb ? 1 : 0;
}

/** Sets desired- and max-replicas on `rs` in place; true when they changed. */
export function setReplicasAnnotations(rs: ReplicaSet, d: Deployment): boolean {
  const a = (rs.metadata.annotations ??= {});
  const want = String(desired(d));
  const max = String(desired(d) + maxSurge(d));
  if (a[DESIRED_REPLICAS] === want && a[MAX_REPLICAS] === max) return false;
  a[DESIRED_REPLICAS] = want;
  a[MAX_REPLICAS] = max;
  return true;
}

/** `desired-replicas` of `rs`, if readable. */
export function desiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  const v = rs.metadata.annotations?.[DESIRED_REPLICAS];
  const n = v === undefined ? Number.NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : undefined;
}

/** `max-replicas` of `rs`, if readable. */
export function maxReplicasAnnotation(rs: ReplicaSet): number | undefined {
  const v = rs.metadata.annotations?.[MAX_REPLICAS];
  const n = v === undefined ? Number.NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Brings the new ReplicaSet's annotations up to date, in place (kube's
 * `SetNewReplicaSetAnnotations`): the Deployment's annotations, `revision` raised to
 * `newRevision` (the old one appended to `revision-history`), and for a ReplicaSet about to be
 * created the replicas annotations. True when something changed.
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: bigint,
  exists: boolean,
): boolean {
  const a = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const old = a[REVISION];
  // A revision that is not a number is left alone, as kube leaves it.
  const readable = old === undefined || old === '' || REVISION_TEXT.test(old);
  if (readable && parseRevision(old) < newRevision) {
    a[REVISION] = String(newRevision);
    changed = true;
    if (old !== undefined && old !== '') {
      const history = a[REVISION_HISTORY];
      a[REVISION_HISTORY] = history === undefined || history === '' ? old : `${history},${old}`;
    }
  }
  if (!exists && setReplicasAnnotations(rs, d)) changed = true;
  return changed;
}

/** Sets the Deployment's revision annotation in place; true when it changed. */
export function setDeploymentRevision(d: Deployment, revision: string): boolean {
  const a = (d.metadata.annotations ??= {});
  if (a[REVISION] === revision) return false;
  a[REVISION] = revision;
  return true;
}
