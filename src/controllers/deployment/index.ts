/**
 * The `deployment-controller` (alias `deployment`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { DeploymentController } from './controller.js';

/** Registry entry. */
export const deploymentController: ControllerDescriptor = {
  name: 'deployment-controller',
  aliases: ['deployment'],
  serviceAccount: 'deployment-controller',
  start(ctx) {
    new DeploymentController(ctx).start();
  },
};
