/**
 * The `garbage-collector-controller` (alias `garbagecollector`): see `collector.ts`.
 * `--enable-garbage-collector=false` keeps it from starting.
 */
import type { ControllerDescriptor } from '../context.js';
import { GarbageCollector } from './collector.js';

/** Registry entry. */
export const garbageCollectorController: ControllerDescriptor = {
  name: 'garbage-collector-controller',
  aliases: ['garbagecollector'],
  serviceAccount: 'generic-garbage-collector',
  async start(ctx) {
    if (!ctx.config.enableGarbageCollector) {
      ctx.log.info('not started: --enable-garbage-collector=false');
      return;
    }
    await new GarbageCollector(ctx).start();
  },
};
