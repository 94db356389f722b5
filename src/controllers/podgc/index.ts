/**
 * The `pod-garbage-collector-controller` (alias `podgc`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { KUBE_TIMING, PodGcController, type PodGcTiming } from './controller.js';

/** A descriptor with other timing (tests). */
export function podGcDescriptor(timing: PodGcTiming = KUBE_TIMING): ControllerDescriptor {
  return {
    name: 'pod-garbage-collector-controller',
    aliases: ['podgc'],
    serviceAccount: 'pod-garbage-collector',
    start(ctx) {
      new PodGcController(ctx, timing).start();
    },
  };
}

/** Registry entry. */
export const podGcController: ControllerDescriptor = podGcDescriptor();
