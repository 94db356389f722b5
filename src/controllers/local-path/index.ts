/**
 * The `local-path-provisioner` (not a kube-controller-manager controller: k3s runs the same job as
 * its own Deployment), so it runs only when named; `capstan cluster` names it. It acts as the `persistent-volume-binder` service account, whose
 * bootstrap role already grants what it needs (volumes, claims, helper pods, events): a role of
 * its own would have to be added to the server's bootstrap policy.
 */
import type { ControllerDescriptor } from '../context.js';
import { LocalPathProvisioner } from './controller.js';

/** Registry entry. */
export const localPathProvisionerController: ControllerDescriptor = {
  name: 'local-path-provisioner',
  serviceAccount: 'persistent-volume-binder',
  // Not a kube-controller-manager controller: `capstan cluster` turns it on (src/cluster/storage.ts).
  disabledByDefault: true,
  start(ctx) {
    new LocalPathProvisioner(ctx).start();
  },
};
