/**
 * The `endpointslice-mirroring-controller` (alias `endpointslicemirroring`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { EndpointSliceMirroringController } from './controller.js';

/** Registry entry. */
export const endpointSliceMirroringController: ControllerDescriptor = {
  name: 'endpointslice-mirroring-controller',
  aliases: ['endpointslicemirroring'],
  serviceAccount: 'endpointslicemirroring-controller',
  start(ctx) {
    new EndpointSliceMirroringController(ctx).start();
  },
};
