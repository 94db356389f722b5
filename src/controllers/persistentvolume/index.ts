/**
 * The `persistentvolume-binder-controller` (alias `persistentvolume-binder`): see `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { PersistentVolumeBinder } from './controller.js';

/** Registry entry. */
export const persistentVolumeBinderController: ControllerDescriptor = {
  name: 'persistentvolume-binder-controller',
  aliases: ['persistentvolume-binder'],
  serviceAccount: 'persistent-volume-binder',
  start(ctx) {
    new PersistentVolumeBinder(ctx).start();
  },
};
