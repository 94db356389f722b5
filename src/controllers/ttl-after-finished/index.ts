/**
 * The `ttl-after-finished-controller` (alias `ttl-after-finished`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { TtlAfterFinishedController } from './controller.js';

/** Registry entry. */
export const ttlAfterFinishedController: ControllerDescriptor = {
  name: 'ttl-after-finished-controller',
  aliases: ['ttl-after-finished'],
  serviceAccount: 'ttl-after-finished-controller',
  start(ctx) {
    new TtlAfterFinishedController(ctx).start();
  },
};
