/**
 * The `cronjob-controller` (alias `cronjob`): see `controller.ts` (the loop), `sync.ts` (one
 * reconcile, as kube v1.33's), `schedule.ts` and `timing.ts` (when it fires).
 */
import type { ControllerDescriptor } from '../context.js';
import { CronJobController } from './controller.js';

/** Registry entry. */
export const cronJobController: ControllerDescriptor = {
  name: 'cronjob-controller',
  aliases: ['cronjob'],
  serviceAccount: 'cronjob-controller',
  start(ctx) {
    new CronJobController(ctx).start();
  },
};
