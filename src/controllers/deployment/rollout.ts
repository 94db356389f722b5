/**
 * One sync of one Deployment over its ReplicaSets, as kube's `deployment/sync.go`: find or
 * create the new ReplicaSet and keep revisions in step, scale (proportionally while a rollout
 * is under way), clean up old ReplicaSets past `revisionHistoryLimit`, and write status.
 * `rolling.ts` and `recreate.ts` drive it per strategy.
 *
 * The working Deployment `d` is a copy; each status write takes the server's answer, so later
 * writes of the same sync do not conflict with earlier ones.
 */
import type { Deployment, ReplicaSet } from '../../api/types/apps-v1.js';
import type { Pod, PodTemplateSpec } from '../../api/types/core-v1.js';
import { isAlreadyExists } from '../../client/index.js';
import { controllerRefOf, newControllerRef } from '../shared/controller-ref.js';
import {
  byRevision,
  desiredReplicasAnnotation,
  maxReplicasAnnotation,
  maxRevision,
  revisionOf,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './annotations.js';
import {
  activeReplicaSets,
  desired,
  isRollingUpdate,
  maxSurge,
  newRSNewReplicas,
  rsReplicas,
  specReplicas,
} from './replicas.js';
import {
  calculateStatus,
  conditionOf,
  hasProgressDeadline,
  newCondition,
  REASONS,
  rolloutStatus,
  sameDeploymentStatus,
  setCondition,
} from './status.js';
import { POD_TEMPLATE_HASH, computeHash, equalIgnoreHash } from './template-hash.js';
import { cloneJson } from '../../api/object.js';

/** The writes and clocks a sync uses (the controller implements them over the client). */
export interface DeploymentOps {
  now(): number;
  createRS(rs: ReplicaSet): Promise<ReplicaSet>;
  getRS(namespace: string, name: string): Promise<ReplicaSet>;
  updateRS(rs: ReplicaSet): Promise<ReplicaSet>;
  deleteRS(namespace: string, name: string): Promise<void>;
  /** PUT deployments/status (annotations travel too, as kube's status strategy allows). */
  updateStatus(d: Deployment): Promise<Deployment>;
  event(d: Deployment, type: 'Normal' | 'Warning', reason: string, note: string): void;
  requeueAfter(ms: number): void;
  requeueRateLimited(): void;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return ta !== tb ? ta - tb : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** One sync's state. */
export class DeploymentSync {
  d: Deployment;
  /** The Deployment's ReplicaSets (claimed), updated as the sync writes them. */
  rsList: ReplicaSet[];

  constructor(
    d: Deployment,
    rsList: readonly ReplicaSet[],
    /** Active pods by the UID of the ReplicaSet controlling them. */
    readonly podsByRS: ReadonlyMap<string, readonly Pod[]>,
    readonly ops: DeploymentOps,
  ) {
    this.d = cloneJson(d);
    this.rsList = [...rsList];
  }

  /** The new ReplicaSet (created when `create` and missing) and the old ones, revisions synced. */
  async allReplicaSets(create: boolean): Promise<{ newRS: ReplicaSet | undefined; oldRSs: ReplicaSet[] }> {
    const sorted = [...this.rsList].sort(byCreation);
    const existing = sorted.find((rs) => equalIgnoreHash(rs.spec?.template, this.d.spec?.template));
    const oldRSs = sorted.filter((rs) => rs !== existing);
    const newRS = await this.#newReplicaSet(existing, oldRSs, create);
    return { newRS, oldRSs };
  }

  async #newReplicaSet(
    existing: ReplicaSet | undefined,
    oldRSs: ReplicaSet[],
    create: boolean,
  ): Promise<ReplicaSet | undefined> {
    const d = this.d;
    const newRevision = maxRevision(oldRSs) + 1n;
    if (existing !== undefined) {
      let rs = existing;
      const copy = cloneJson(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyChanged = (copy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsChanged || minReadyChanged) {
        copy.spec = { ...copy.spec, minReadySeconds: d.spec?.minReadySeconds ?? 0 };
        rs = this.#replace(await this.ops.updateRS(copy));
      }
      let needsUpdate = setDeploymentRevision(d, String(revisionOf(rs)));
      if (hasProgressDeadline(d) && conditionOf(d.status, 'Progressing') === undefined) {
        d.status ??= {};
        setCondition(
          d.status,
          newCondition(
            'Progressing',
            'True',
            REASONS.foundNewRS,
            `Found new replica set "${rs.metadata.name ?? ''}"`,
            this.ops.now(),
          ),
        );
        needsUpdate = true;
      }
      if (needsUpdate) await this.writeDeployment();
      return rs;
    }
    if (!create) return undefined;

    const template: PodTemplateSpec = cloneJson(d.spec?.template ?? { metadata: {} });
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata.labels, [POD_TEMPLATE_HASH]: hash },
    };
    const selector = cloneJson(d.spec?.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH]: hash };
    const namespace = d.metadata.namespace ?? '';
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name ?? ''}-${hash}`,
        namespace,
        ownerReferences: [
          newControllerRef({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: d.metadata }),
        ],
        labels: { ...template.metadata.labels },
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    const count = newRSNewReplicas(d, [...oldRSs, rs], rs);
    rs.spec = { ...rs.spec, replicas: count };
    setNewReplicaSetAnnotations(d, rs, newRevision, false);

    let created: ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await this.ops.createRS(rs);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        const msg = `Failed to create new replica set "${rs.metadata.name ?? ''}": ${describe(err)}`;
        d.status ??= {};
        if (hasProgressDeadline(d)) {
          setCondition(
            d.status,
            newCondition('Progressing', 'False', REASONS.failedRSCreate, msg, this.ops.now()),
          );
        }
        this.ops.event(d, 'Warning', 'FailedCreate', msg);
        await this.writeDeployment();
        throw err;
      }
      // Ours already (a stale cache), or a hash collision: then bump collisionCount and retry.
      const found = await this.ops.getRS(namespace, rs.metadata.name ?? '');
      if (
        controllerRefOf(found.metadata)?.uid === d.metadata.uid &&
        equalIgnoreHash(found.spec?.template, d.spec?.template)
      ) {
        created = found;
        alreadyExisted = true;
      } else {
        d.status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
        await this.writeDeployment();
        throw new Error(
          `hash collision for ReplicaSet ${namespace}/${rs.metadata.name ?? ''}: collisionCount raised`,
          {
            cause: err,
          },
        );
      }
    }
    this.rsList.push(created);
    if (!alreadyExisted && count > 0) {
      this.ops.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${created.metadata.name ?? ''} from 0 to ${count}`,
      );
    }
    setDeploymentRevision(d, String(newRevision));
    if (!alreadyExisted && hasProgressDeadline(d)) {
      d.status ??= {};
      setCondition(
        d.status,
        newCondition(
          'Progressing',
          'True',
          REASONS.newRSCreated,
          `Created new replica set "${created.metadata.name ?? ''}"`,
          this.ops.now(),
        ),
      );
    }
    await this.writeDeployment();
    return created;
  }

  #replace(rs: ReplicaSet): ReplicaSet {
    this.rsList = this.rsList.map((x) => (x.metadata.uid === rs.metadata.uid ? rs : x));
    return rs;
  }

  /** PUTs the working Deployment's status (and annotations); keeps the answer. */
  async writeDeployment(): Promise<void> {
    this.d = cloneJson(await this.ops.updateStatus(this.d));
  }

  /**
   * Scales `rs` to `size` and updates its replicas annotations; an event when the size changed.
   * Returns the written ReplicaSet (or `rs` when nothing changed).
   */
  async scaleReplicaSet(rs: ReplicaSet, size: number, operation?: 'up' | 'down'): Promise<ReplicaSet> {
    const copy = cloneJson(rs);
    const sizeChanged = rsReplicas(rs) !== size;
    const annotationsChanged = setReplicasAnnotations(copy, this.d);
    if (!sizeChanged && !annotationsChanged) return rs;
    const from = rsReplicas(rs);
    copy.spec = { ...copy.spec, replicas: size };
    const written = this.#replace(await this.ops.updateRS(copy));
    if (sizeChanged) {
      const op = operation ?? (from < size ? 'up' : 'down');
      this.ops.event(
        this.d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${op} replica set ${written.metadata.name ?? ''} from ${from} to ${size}`,
      );
    }
    return written;
  }

  /** Scales `rs` unless it already has `size` (kube's `scaleReplicaSetAndRecordEvent`). */
  async scaleTo(rs: ReplicaSet, size: number): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    if (rsReplicas(rs) === size) return { scaled: false, rs };
    return { scaled: true, rs: await this.scaleReplicaSet(rs, size) };
  }

  /** The Deployment was resized (a ReplicaSet's desired-replicas differs from spec.replicas). */
  async isScalingEvent(): Promise<boolean> {
    const { newRS, oldRSs } = await this.allReplicaSets(false);
    return activeReplicaSets([...oldRSs, newRS]).some((rs) => {
      const want = desiredReplicasAnnotation(rs);
      return want !== undefined && want !== desired(this.d);
    });
  }

  /** Scaling without a rollout: kube's `scale` (proportional across ReplicaSets while rolling). */
  async scale(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Promise<void> {
    const d = this.d;
    const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
    if (activeOrLatest !== undefined) {
      if (rsReplicas(activeOrLatest) !== desired(d)) await this.scaleTo(activeOrLatest, desired(d));
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of activeReplicaSets(oldRSs)) await this.scaleTo(old, 0);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const all = activeReplicaSets([...oldRSs, newRS]);
    const total = specReplicas(all);
    const allowed = desired(d) > 0 ? desired(d) + maxSurge(d) : 0;
    const toAdd = allowed - total;
    if (toAdd === 0) return;
    // Up: largest (then newest) first; down: largest (then oldest) first.
    all.sort((a, b) => {
      const s = rsReplicas(b) - rsReplicas(a);
      if (s !== 0) return s;
      return toAdd > 0 ? byCreation(b, a) : byCreation(a, b);
    });
    const sizes = new Map<ReplicaSet, number>();
    let added = 0;
    for (const rs of all) {
      const p = proportion(rs, d, toAdd, added);
      sizes.set(rs, rsReplicas(rs) + p);
      added += p;
    }
    for (const [i, rs] of all.entries()) {
      let size = sizes.get(rs) ?? 0;
      if (i === 0) size = Math.max(0, size + toAdd - added);
      await this.scaleReplicaSet(rs, size, toAdd > 0 ? 'up' : 'down');
    }
  }

  /** Deletes old, empty ReplicaSets beyond `revisionHistoryLimit`, oldest revision first. */
  async cleanup(oldRSs: readonly ReplicaSet[]): Promise<void> {
    const limit = this.d.spec?.revisionHistoryLimit;
    if (limit === undefined) return;
    const alive = oldRSs.filter((rs) => rs.metadata.deletionTimestamp === undefined);
    const diff = alive.length - limit;
    if (diff <= 0) return;
    alive.sort((a, b) => byRevision(a, b) || byCreation(a, b));
    for (const rs of alive.slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || rsReplicas(rs) !== 0) continue;
      if ((rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      await this.ops.deleteRS(rs.metadata.namespace ?? '', rs.metadata.name ?? '');
    }
  }

  /** Writes the counts and Available condition (kube's `syncDeploymentStatus`). */
  async syncStatus(all: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
    const status = calculateStatus(all, newRS, this.d, this.ops.now());
    if (sameDeploymentStatus(this.d.status, status)) return;
    this.d.status = status;
    await this.writeDeployment();
  }

  /** Writes status with the Progressing condition; requeues a rollout that may time out. */
  async syncRolloutStatus(
    all: readonly (ReplicaSet | undefined)[],
    newRS: ReplicaSet | undefined,
  ): Promise<void> {
    const status = rolloutStatus(all, newRS, this.d, this.ops.now());
    if (sameDeploymentStatus(this.d.status, status)) {
      this.#requeueStuck(status);
      return;
    }
    this.d.status = status;
    await this.writeDeployment();
  }

  #requeueStuck(status: Deployment['status'] & object): void {
    const d = this.d;
    const cond = conditionOf(d.status, 'Progressing');
    if (!hasProgressDeadline(d) || cond === undefined) return;
    if (cond.reason === REASONS.timedOut) return;
    const complete =
      (status.updatedReplicas ?? 0) === desired(d) &&
      (status.replicas ?? 0) === desired(d) &&
      (status.availableReplicas ?? 0) === desired(d);
    if (complete) return;
    const from = Date.parse(cond.lastUpdateTime ?? '');
    if (!Number.isFinite(from)) return;
    const after = from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - this.ops.now();
    if (after < 1000) this.ops.requeueRateLimited();
    else this.ops.requeueAfter(after + 1000);
  }
}

/** The one active ReplicaSet, or the newest when none is active; undefined when several are. */
function findActiveOrLatest(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): ReplicaSet | undefined {
  if (newRS === undefined && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = activeReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** The new ReplicaSet holds every replica, all available (kube's `IsSaturated`). */
function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (rs === undefined) return false;
  const want = desiredReplicasAnnotation(rs);
  return (
    want === desired(d) && rsReplicas(rs) === desired(d) && (rs.status?.availableReplicas ?? 0) === desired(d)
  );
}

/** This ReplicaSet's share of a resize (kube's `GetProportion`). */
function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  if (desired(d) === 0) return -rsReplicas(rs);
  const maxReplicas = desired(d) + maxSurge(d);
  const before = maxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
  if (before === 0) return 0;
  return Math.round((rsReplicas(rs) * maxReplicas) / before) - rsReplicas(rs);
}
