/**
 * The controller bench's ceiling subject (`capstan bench controllers --manager-ceiling`): no
 * controller manager at all. The bench itself creates the Deployment's R pods, each as its
 * ReplicaSet's controller would (`replicaPodBody`), keeping {@link IN_FLIGHT} creates in flight
 * until all are made, with no ReplicaSet, expectations, slow-start batches, events or status
 * writes in between. Every controller manager must at least create those pods through the same
 * server, and kube's keeps at most 500 of one ReplicaSet's creates in flight (`burstReplicas`),
 * so on a given server and machine no manager creates them faster: the ratio of this subject's
 * pods/s to kube-controller-manager's bounds the ratio any manager could show there.
 */
import { randomUUID } from 'node:crypto';
import type { BenchClient } from '../client.js';
import { closedLoop } from '../load.js';
import type { Row } from '../report.js';
import { ratePerSecond } from '../stats.js';
import { until } from './controllers.js';
import { DEPLOYMENT, replicaPodBody } from './objects.js';
import { podCount } from './watch.js';

/** Creates in flight at once: kube's `burstReplicas`, the most one ReplicaSet sync makes. */
export const IN_FLIGHT = 500;

/** The subject's name in rows and goal lines (it takes A's place). */
export const CEILING_SUBJECT = 'A: ceiling';

/** What the subject is, for the report's target line. */
export const CEILING_LABEL = `ceiling: the bench's own creates, ${IN_FLIGHT} in flight`;

/** Settings of one ceiling run. */
export interface CeilingRun {
  readonly client: BenchClient;
  readonly replicas: number;
  /** A namespace no earlier run used. */
  readonly namespace: string;
  /** Longest the pods' removal may take. */
  readonly timeoutMs: number;
}

async function post(client: BenchClient, path: string, body: string): Promise<void> {
  await client.expect('POST', path, 201, { body, contentType: 'application/json', discardBody: true });
}

/**
 * Deletes the namespace's pods (unbound, so they go at once) and waits until none is listed: the
 * next subject's manager would otherwise list and cache them, and the server keep them.
 */
async function removePods(client: BenchClient, ns: string, timeoutMs: number): Promise<void> {
  await client.expect('DELETE', `/api/v1/namespaces/${ns}/pods`, 200, { discardBody: true });
  await until(`${ns}: the ceiling's pods deleted`, timeoutMs, async () => (await podCount(client, ns)) === 0);
}

/**
 * Creates `replicas` pods in a fresh namespace (see the module comment), then deletes them;
 * resolves with the row.
 * @throws BenchError when a request fails (the creates in flight settle first); Error when a list
 *   after the last create counts fewer pods, or the pods are not gone within the timeout.
 */
export async function measureCeiling(run: CeilingRun, progress: (line: string) => void): Promise<Row> {
  const { client, namespace: ns, replicas: r } = run;
  await post(
    client,
    '/api/v1/namespaces',
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
  );
  // No manager makes the namespace's default ServiceAccount, which pod admission looks up.
  await post(
    client,
    `/api/v1/namespaces/${ns}/serviceaccounts`,
    JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
  );
  const body = replicaPodBody(randomUUID());
  const path = `/api/v1/namespaces/${ns}/pods`;
  progress(`  ${CEILING_LABEL}: creating ${r} pods of ${ns}/${DEPLOYMENT}`);
  const started = process.hrtime.bigint();
  let firstAt: bigint | undefined;
  await closedLoop(Math.min(IN_FLIGHT, r), { maxOps: r }, async () => {
    await post(client, path, body);
    firstAt ??= process.hrtime.bigint();
  });
  const count = await podCount(client, ns);
  if (count < r) throw new Error(`${ns}: ${count} pods listed after ${r} creates`);
  const lastAt = process.hrtime.bigint();
  const createMs = Number(lastAt - started) / 1e6;
  await removePods(client, ns, run.timeoutMs);
  return {
    scenario: 'controllers',
    case: `Deployment 0 → ${r.toLocaleString('en-US')} replicas`,
    subject: CEILING_SUBJECT,
    figures: {
      'pods/s': ratePerSecond(r, createMs),
      'first pod ms': Number((firstAt ?? lastAt) - started) / 1e6,
      'last pod s': createMs / 1000,
    },
  };
}
