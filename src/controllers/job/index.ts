/**
 * The `job-controller` (alias `job`): see `controller.ts` (the loop) and `sync.ts` (one
 * reconcile, as kube v1.33's).
 */
import type { ControllerDescriptor } from '../context.js';
import { JobController } from './controller.js';

/** Registry entry. */
export const jobController: ControllerDescriptor = {
  name: 'job-controller',
  aliases: ['job'],
  serviceAccount: 'job-controller',
  start(ctx) {
    new JobController(ctx).start();
  },
};
