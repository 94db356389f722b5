/**
 * Every controller the manager can run, in start order (kube's names).
 *
 * To add a controller:
 * 1. make a folder `src/controllers/<name>/` whose `index.ts` exports one
 *    `ControllerDescriptor` (`src/controllers/context.ts`): `{ name, serviceAccount,
 *    disabledByDefault?, start(ctx) }`;
 * 2. in `start`, take informers from `ctx.informers.informer(REF)`, add handlers that only
 *    enqueue keys, start `concurrency(ctx.config, '<flag key>')` workers with `startWorkers`
 *    (`src/controllers/shared/workers.ts`: it waits for the caches before the first sync), write
 *    through `ctx.client`, report through `ctx.eventRecorder('<name>-controller')`, and stop when
 *    `ctx.signal` aborts;
 * 3. import it below and add it to {@link CONTROLLERS} (one line; keep kube's order loosely:
 *    it only decides start order).
 * `--controllers` and `capstan server --controllers` then know it.
 */
import type { ControllerDescriptor } from '../controllers/context.js';
import { deploymentController } from '../controllers/deployment/index.js';
import { garbageCollectorController } from '../controllers/garbagecollector/index.js';
import { replicaSetController } from '../controllers/replicaset/index.js';
import { replicationControllerController } from '../controllers/replicationcontroller/index.js';
import { statefulSetController } from '../controllers/statefulset/index.js';
import { daemonSetController } from '../controllers/daemonset/index.js';
import { jobController } from '../controllers/job/index.js';
import { cronJobController } from '../controllers/cronjob/index.js';
import { ttlAfterFinishedController } from '../controllers/ttl-after-finished/index.js';
import { endpointsController } from '../controllers/endpoints/index.js';
import { endpointSliceController } from '../controllers/endpointslice/index.js';
import { endpointSliceMirroringController } from '../controllers/endpointslicemirroring/index.js';
import { nodeIpamController } from '../controllers/node-ipam/index.js';
import { nodeLifecycleController } from '../controllers/node-lifecycle/index.js';
import { podGcController } from '../controllers/podgc/index.js';
import { disruptionController } from '../controllers/disruption/index.js';
import { csrApprovingController } from '../controllers/csrapproving/index.js';
import { csrSigningController } from '../controllers/csrsigning/index.js';
import { namespaceController } from '../controllers/namespace/index.js';
import { serviceAccountController } from '../controllers/serviceaccount/index.js';
import { rootCaCertPublisherController } from '../controllers/root-ca-cert-publisher/index.js';
import { serviceAccountTokenController } from '../controllers/serviceaccount-token/index.js';
import { clusterRoleAggregationController } from '../controllers/clusterrole-aggregation/index.js';
import { tokenCleanerController } from '../controllers/token-cleaner/index.js';
import { bootstrapSignerController } from '../controllers/bootstrap-signer/index.js';
import { persistentVolumeBinderController } from '../controllers/persistentvolume/index.js';
import { persistentVolumeExpanderController } from '../controllers/persistentvolume-expander/index.js';
import { pvProtectionController } from '../controllers/pv-protection/index.js';
import { pvcProtectionController } from '../controllers/pvc-protection/index.js';
import { localPathProvisionerController } from '../controllers/local-path/index.js';
import { resourceQuotaController } from '../controllers/resourcequota/index.js';

/** The known controllers. */
export const CONTROLLERS: readonly ControllerDescriptor[] = [
  serviceAccountTokenController,
  namespaceController,
  serviceAccountController,
  rootCaCertPublisherController,
  clusterRoleAggregationController,
  resourceQuotaController,
  tokenCleanerController,
  bootstrapSignerController,
  garbageCollectorController,
  replicaSetController,
  replicationControllerController,
  deploymentController,
  statefulSetController,
  daemonSetController,
  jobController,
  cronJobController,
  ttlAfterFinishedController,
  endpointsController,
  endpointSliceController,
  endpointSliceMirroringController,
  nodeIpamController,
  nodeLifecycleController,
  podGcController,
  disruptionController,
  csrApprovingController,
  csrSigningController,
  persistentVolumeBinderController,
  persistentVolumeExpanderController,
  pvcProtectionController,
  pvProtectionController,
  localPathProvisionerController,
];

/** The names `--controllers` accepts. */
export function knownControllerNames(): string[] {
  return CONTROLLERS.map((c) => c.name);
}
