/**
 * The `node-ipam-controller` (alias `nodeipam`): see `controller.ts`. It runs only with
 * `--allocate-node-cidrs`; a bad `--cluster-cidr` or mask fails its start.
 */
import type { ControllerDescriptor } from '../context.js';
import { NodeIpamController } from './controller.js';

/** Registry entry. */
export const nodeIpamController: ControllerDescriptor = {
  name: 'node-ipam-controller',
  aliases: ['nodeipam'],
  serviceAccount: 'node-controller',
  start(ctx) {
    if (!ctx.config.allocateNodeCidrs) return;
    new NodeIpamController(ctx).start();
  },
};
