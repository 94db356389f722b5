/**
 * The cluster's `system:aggregated-metrics-reader` ClusterRole. The server serves
 * `metrics.k8s.io` itself (no metrics-server to install), so the cluster makes the role that
 * metrics-server's install would make: get, list and watch of pod and node metrics, aggregated
 * into `view`, `edit` and `admin`, so that whoever may read pods may run `kubectl top`. A bare
 * `capstan server` does not make it: kube-apiserver's bootstrap policy has no such role.
 */
import type { ClusterRole } from '../api/types/rbac-v1.js';
import { CLUSTER_ROLES, Client, isAlreadyExists } from '../client/index.js';
import type { CommandIo, Companion } from '../server/run.js';
import type { ServingServer } from '../server/server.js';

export const METRICS_READER_ROLE = 'system:aggregated-metrics-reader';

/** The role as metrics-server's manifest defines it. */
export function metricsReaderRole(): ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: METRICS_READER_ROLE,
      labels: {
        'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
        'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
        'rbac.authorization.k8s.io/aggregate-to-view': 'true',
      },
    },
    rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
  };
}

/**
 * Runs `next` while making the role when it is missing (an administrator's later change is kept).
 * `next` (the node) does not wait for it.
 */
export function withMetricsReaderRole(next: Companion): Companion {
  return async (server, io) => {
    const making = makeMetricsReaderRole(server, io);
    try {
      return await next(server, io);
    } finally {
      await making;
    }
  };
}

/** Makes the role when it is missing; reports a failure through `io`. */
async function makeMetricsReaderRole(server: ServingServer, io: CommandIo): Promise<void> {
  let client: Client | undefined;
  try {
    client = new Client(await server.loopbackConfig('capstan:cluster-rbac', ['system:masters']));
    await client
      .resource<ClusterRole>(CLUSTER_ROLES)
      .create(metricsReaderRole())
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  } catch (err) {
    io.err(`rbac: could not make the ClusterRole ${METRICS_READER_ROLE}: ${String(err)}`);
  } finally {
    await client?.close();
  }
}
