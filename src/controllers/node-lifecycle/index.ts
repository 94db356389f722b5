/**
 * The `node-lifecycle-controller` (alias `nodelifecycle`), taint-based eviction included:
 * see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { startNodeLifecycle } from './controller.js';

/** Registry entry. */
export const nodeLifecycleController: ControllerDescriptor = {
  name: 'node-lifecycle-controller',
  aliases: ['nodelifecycle'],
  serviceAccount: 'node-controller',
  start(ctx) {
    startNodeLifecycle(ctx);
  },
};
