/**
 * The `endpointslice-controller` (alias `endpointslice`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { EndpointSliceController } from './controller.js';

/** Registry entry. */
export const endpointSliceController: ControllerDescriptor = {
  name: 'endpointslice-controller',
  aliases: ['endpointslice'],
  serviceAccount: 'endpointslice-controller',
  start(ctx) {
    new EndpointSliceController(ctx).start();
  },
};
