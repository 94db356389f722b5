/**
 * The `replicationcontroller-controller` (alias `replicationcontroller`): the ReplicaSet
 * controller over core/v1 ReplicationControllers, whose selector is a plain label map (kube runs
 * the same code over converted objects).
 */
import type { ReplicationController } from '../../api/types/core-v1.js';
import { REPLICATION_CONTROLLERS } from '../../client/index.js';
import type { ControllerDescriptor } from '../context.js';
import { ReplicaSetController } from '../replicaset/controller.js';
import type { ReplicaKind } from '../replicaset/kind.js';
import { labelMatcher } from '../shared/label-selector.js';

/** core/v1 ReplicationController for the shared controller. */
export const REPLICATION_CONTROLLER_KIND: ReplicaKind<ReplicationController> = {
  ref: REPLICATION_CONTROLLERS,
  apiVersion: 'v1',
  kind: 'ReplicationController',
  component: 'replication-controller',
  concurrencyKey: 'rc',
  // An RC without a selector uses its template's labels (the API server defaults it so).
  selector: (rc) =>
    labelMatcher({ matchLabels: rc.spec?.selector ?? rc.spec?.template?.metadata?.labels ?? {} }),
};

/** Registry entry. */
export const replicationControllerController: ControllerDescriptor = {
  name: 'replicationcontroller-controller',
  aliases: ['replicationcontroller'],
  serviceAccount: 'replication-controller',
  start(ctx) {
    new ReplicaSetController(REPLICATION_CONTROLLER_KIND, ctx).start();
  },
};
