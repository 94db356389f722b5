/**
 * The `resourcequota-controller` (alias `resourcequota`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { ResourceQuotaController } from './controller.js';

/** Registry entry. */
export const resourceQuotaController: ControllerDescriptor = {
  name: 'resourcequota-controller',
  aliases: ['resourcequota'],
  serviceAccount: 'resourcequota-controller',
  start(ctx) {
    new ResourceQuotaController(ctx).start();
  },
};
