/**
 * The `endpoints-controller` (alias `endpoint`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { EndpointsController } from './controller.js';

/** Registry entry. */
export const endpointsController: ControllerDescriptor = {
  name: 'endpoints-controller',
  aliases: ['endpoint'],
  serviceAccount: 'endpoint-controller',
  start(ctx) {
    new EndpointsController(ctx).start();
  },
};
