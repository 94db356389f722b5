/**
 * Cluster DNS as a client of the API: Services and EndpointSlices through shared informers
 * feed a {@link ClusterZone}, which a {@link startDnsServer} serves. Run by the node agent in
 * the single-node cluster, or alone against any API server.
 */
import {
  Client,
  ENDPOINT_SLICES,
  SERVICES,
  SharedInformerFactory,
  type ClientConfig,
} from '../client/index.js';
import type { Service } from '../api/types/core-v1.js';
import type { EndpointSlice } from '../api/types/discovery-v1.js';
import { hostUpstreams, type Upstream } from './forward.js';
import { startDnsServer, type DnsServer } from './server.js';
import { ClusterZone } from './zone.js';

/** Options of {@link startClusterDns}. */
export interface ClusterDnsOptions {
  /** kubelet's `clusterDomain` (default `cluster.local`). */
  readonly clusterDomain?: string;
  readonly host?: string;
  readonly port?: number;
  /** Default: the host's `/etc/resolv.conf` nameservers. */
  readonly upstreams?: readonly Upstream[];
  readonly log?: (line: string) => void;
}

/** A running cluster DNS. */
export interface ClusterDns extends DnsServer {
  readonly zone: ClusterZone;
}

/** Starts the informers, waits for their first sync, then serves. */
export async function startClusterDns(
  config: ClientConfig,
  opts: ClusterDnsOptions = {},
): Promise<ClusterDns> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const client = new Client({ ...config, userAgent: config.userAgent ?? 'capstan-dns' });
  const zone = new ClusterZone(opts.clusterDomain ?? 'cluster.local');
  const factory = new SharedInformerFactory(client, { log: (m, e) => log(`dns: ${m}: ${String(e)}`) });
  factory.informer<Service>(SERVICES).addHandler({
    add: (s) => zone.setService(s),
    update: (_o, s) => zone.setService(s),
    delete: (s) => zone.deleteService(s),
  });
  factory.informer<EndpointSlice>(ENDPOINT_SLICES).addHandler({
    add: (s) => zone.setSlice(s),
    update: (_o, s) => zone.setSlice(s),
    delete: (s) => zone.deleteSlice(s),
  });
  factory.start();
  try {
    await factory.waitForSync();
    const server = await startDnsServer({
      zone,
      ...(opts.host === undefined ? {} : { host: opts.host }),
      ...(opts.port === undefined ? {} : { port: opts.port }),
      upstreams: opts.upstreams ?? hostUpstreams(),
      log,
    });
    return {
      zone,
      host: server.host,
      port: server.port,
      close: async () => {
        await server.close();
        await factory.stop();
        await client.close();
      },
    };
  } catch (err) {
    await factory.stop();
    await client.close();
    throw err;
  }
}
