/**
 * The `disruption-controller` (alias `disruption`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { DisruptionController } from './controller.js';

/** Registry entry. */
export const disruptionController: ControllerDescriptor = {
  name: 'disruption-controller',
  aliases: ['disruption'],
  serviceAccount: 'disruption-controller',
  start(ctx) {
    new DisruptionController(ctx).start();
  },
};
