/**
 * The `daemonset-controller` (alias `daemonset`): see `controller.ts` (the loop), `sync.ts` (the
 * pod plan and status, as kube v1.33's), `placement.ts` (which nodes) and `pods.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { DaemonSetController } from './controller.js';

/** Registry entry. */
export const daemonSetController: ControllerDescriptor = {
  name: 'daemonset-controller',
  aliases: ['daemonset'],
  serviceAccount: 'daemon-set-controller',
  start(ctx) {
    new DaemonSetController(ctx).start();
  },
};
