/** Static pods: the node's own, from a file or URL source rather than the API server. */
import type { Pod } from '../../api/types/core-v1.js';

/** A pod from the file or URL source (not the API server). */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.['kubernetes.io/config.source'];
  return source === 'file' || source === 'http';
}
