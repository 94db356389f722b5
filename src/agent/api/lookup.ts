/** ConfigMaps and Secrets read from the API server for env (kubelet reads them on demand). */
import type { ConfigMap, Secret } from '../../api/types/core-v1.js';
import { CONFIG_MAPS, SECRETS, isNotFound, type Client } from '../../client/index.js';
import type { ObjectLookup } from '../runtime/env.js';

/** An {@link ObjectLookup} over the API; NotFound is undefined, other errors propagate. */
export function apiLookup(client: Client): ObjectLookup {
  const get = async <T extends ConfigMap | Secret>(
    ref: typeof CONFIG_MAPS,
    namespace: string,
    name: string,
  ): Promise<T | undefined> => {
    try {
      return await client.resource<T>(ref).get(name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return {
    configMap: (ns, name) => get<ConfigMap>(CONFIG_MAPS, ns, name),
    secret: (ns, name) => get<Secret>(SECRETS, ns, name),
  };
}
