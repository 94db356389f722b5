/** DefaultBinder: binds through the `pods/binding` subresource. */
import type { Handle, Plugin } from '../framework/types.js';
import { errorStatus } from '../framework/status.js';
import { PLUGIN } from './names.js';

/** The plugin. */
export function defaultBinder(_args: Record<string, unknown>, handle: Handle): Plugin {
  return {
    name: PLUGIN.DefaultBinder,
    async bind(_state, pod, nodeName) {
      try {
        await handle.api.bind(pod.pod, nodeName);
        return undefined;
      } catch (err) {
        return errorStatus(err, 'binding rejected');
      }
    },
  };
}
