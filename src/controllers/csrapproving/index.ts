/**
 * The `certificatesigningrequest-approving-controller` (alias `csrapproving`): see
 * `controller.ts`.
 */
import type { ControllerDescriptor } from '../context.js';
import { CsrApprovingController } from './controller.js';

/** Registry entry. */
export const csrApprovingController: ControllerDescriptor = {
  name: 'certificatesigningrequest-approving-controller',
  aliases: ['csrapproving'],
  serviceAccount: 'certificate-controller',
  start(ctx) {
    new CsrApprovingController(ctx).start();
  },
};
