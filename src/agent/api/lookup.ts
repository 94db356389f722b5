/**
 * The objects env reads, from the API server: ConfigMaps and Secrets on demand (as kubelet reads
 * them), and Services from one informer over every namespace (kubelet's service lister), started
 * at the first container that needs them.
 */
import type { ConfigMap, Secret, Service } from '../../api/types/core-v1.js';
import {
  CONFIG_MAPS,
  SECRETS,
  SERVICES,
  SharedInformerFactory,
  isNotFound,
  type Client,
  type SharedInformer,
} from '../../client/index.js';
import { EnvError, type ObjectLookup } from '../runtime/env.js';

/** How long a container waits for the first list of Services before it fails (and is retried). */
const SERVICES_SYNC_MS = 5_000;

/** An {@link ObjectLookup} over the API, with the Service informer to stop. */
export interface ApiLookup extends ObjectLookup {
  stop(): Promise<void>;
}

/** An {@link ObjectLookup} over the API; NotFound is undefined, other errors propagate. */
export function apiLookup(client: Client, log: (message: string) => void = () => undefined): ApiLookup {
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
  let factory: SharedInformerFactory | undefined;
  let services: SharedInformer<Service> | undefined;
  return {
    configMap: (ns, name) => get<ConfigMap>(CONFIG_MAPS, ns, name),
    secret: (ns, name) => get<Secret>(SECRETS, ns, name),
    services: async () => {
      if (services === undefined) {
        factory = new SharedInformerFactory(client, {
          log: (m, e) => log(`services: ${m}: ${String(e)}`),
        });
        services = factory.informer<Service>(SERVICES);
        factory.start();
      }
      if (!services.hasSynced()) {
        const signal = AbortSignal.timeout(SERVICES_SYNC_MS);
        await services.whenSynced(signal).catch(() => undefined);
      }
      if (!services.hasSynced())
        throw new EnvError('services have not yet been read at least once, cannot construct envvars');
      return services.store.list();
    },
    stop: async () => {
      await factory?.stop();
    },
  };
}
