/**
 * The `statefulset-controller` (alias `statefulset`): see `controller.ts` (the loop), `sync.ts`
 * (the pod reconcile, as kube v1.33's) and `identity.ts` (names, labels, claims).
 */
import type { ControllerDescriptor } from '../context.js';
import { StatefulSetController } from './controller.js';

/** Registry entry. */
export const statefulSetController: ControllerDescriptor = {
  name: 'statefulset-controller',
  aliases: ['statefulset'],
  serviceAccount: 'statefulset-controller',
  start(ctx) {
    new StatefulSetController(ctx).start();
  },
};
