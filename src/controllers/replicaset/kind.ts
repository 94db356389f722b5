/**
 * What differs between a ReplicaSet and a ReplicationController for the controller they share
 * (kube runs the RC controller as the RS controller over converted objects; we keep the object
 * and describe its kind instead): where it lives, how its selector reads, how its status is
 * written, and the names it reports under.
 */
import type { ReplicaSet, ReplicaSetStatus } from '../../api/types/apps-v1.js';
import type { PodTemplateSpec } from '../../api/types/core-v1.js';
import type { ObjectMeta } from '../../api/types/meta-v1.js';
import { REPLICA_SETS, type ResourceRef } from '../../client/index.js';
import { labelMatcher, type LabelMatcher } from '../shared/label-selector.js';

/** The fields the shared controller reads, common to ReplicaSet and ReplicationController. */
export interface ReplicatedObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { replicas?: number; minReadySeconds?: number; template?: PodTemplateSpec };
  status?: ReplicaSetStatus;
}

/** One replicated kind. */
export interface ReplicaKind<T extends ReplicatedObject> {
  readonly ref: ResourceRef;
  readonly apiVersion: string;
  readonly kind: string;
  /** The event reporter (`replicaset-controller`, `replication-controller`). */
  readonly component: string;
  /** `--concurrent-<key>-syncs`. */
  readonly concurrencyKey: string;
  /** @throws LabelSelectorError when the selector cannot be evaluated. */
  selector(obj: T): LabelMatcher;
}

/** apps/v1 ReplicaSet. */
export const REPLICA_SET_KIND: ReplicaKind<ReplicaSet> = {
  ref: REPLICA_SETS,
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  component: 'replicaset-controller',
  concurrencyKey: 'replicaset',
  selector: (rs) => labelMatcher(rs.spec?.selector),
};
