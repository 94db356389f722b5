/**
 * ImageLocality: prefers nodes that already hold the pod's images, weighted by how widely each
 * image is spread (an image on every node says little), between 23 MiB and 1000 MiB per container.
 */
import { MAX_NODE_SCORE, type Handle, type Plugin } from '../framework/types.js';
import { normalizedImageName } from '../node-info.js';
import { PLUGIN } from './names.js';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;
const STATE = `${PLUGIN.ImageLocality}/images`;

/** The plugin. */
export function imageLocality(_args: Record<string, unknown>, handle: Handle): Plugin {
  return {
    name: PLUGIN.ImageLocality,
    preScore(state, pod) {
      const spec = pod.pod.spec ?? {};
      const images = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c) =>
        normalizedImageName(c.image ?? ''),
      );
      state.write(STATE, images);
      return undefined;
    },
    score(state, _pod, node) {
      const images = state.read<string[]>(STATE) ?? [];
      const snap = handle.snapshot();
      const total = snap.nodes.length;
      let sum = 0;
      if (node.images.size > 0 && total > 0) {
        for (const img of images) {
          const size = node.images.get(img);
          if (size !== undefined) sum += Math.trunc((size * snap.imageNodeCount(img)) / total);
        }
      }
      const max = MAX_CONTAINER_THRESHOLD * images.length;
      if (max <= MIN_THRESHOLD) return 0;
      const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), max);
      return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
    },
  };
}
