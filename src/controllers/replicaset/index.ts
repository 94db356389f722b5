/**
 * The `replicaset-controller` (alias `replicaset`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { ReplicaSetController } from './controller.js';
import { REPLICA_SET_KIND } from './kind.js';

/** Registry entry. */
export const replicaSetController: ControllerDescriptor = {
  name: 'replicaset-controller',
  aliases: ['replicaset'],
  serviceAccount: 'replicaset-controller',
  start(ctx) {
    new ReplicaSetController(REPLICA_SET_KIND, ctx).start();
  },
};
