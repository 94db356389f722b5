/**
 * The cluster bench's steps on one stack, in order: N nodes registered (and Ready, untainted);
 * their idle CPU; a Deployment of R replicas until every pod is Running; a rolling update of it
 * until complete; deleting it until its last pod is gone; J one-pod Jobs until all are Complete.
 * A step that fails gives a `failed` row; the steps after it that need it fail with it.
 */
import type { BenchClient } from '../client.js';
import { closedLoop } from '../load.js';
import type { Row } from '../report.js';
import { fmt } from '../stats.js';
import { deadline, measureStep } from './measure.js';
import {
  DEPLOY_NAMESPACE,
  DEPLOYMENT,
  JOBS_NAMESPACE,
  deploymentBody,
  jobBody,
  rolloutPatch,
} from './objects.js';
import { GroupSampler } from './sampler.js';
import { stackPids, type Stack } from './stack.js';
import { PodTracker, podCount } from './watch.js';

/** The steps, in run order. */
export const CLUSTER_STEPS = ['nodes', 'idle', 'deployment', 'rollout', 'delete', 'jobs'] as const;
export type ClusterStep = (typeof CLUSTER_STEPS)[number];

/** Sizes of one run. */
export interface ClusterSizes {
  readonly nodes: number;
  readonly replicas: number;
  readonly jobs: number;
  /** Seconds the idle step samples. */
  readonly idleSeconds: number;
  /** Longest a step may take, milliseconds. */
  readonly stepTimeoutMs: number;
}

/** Concurrent creations of the bench's own client (Jobs). */
const WRITERS = 16;
/** Quiet time after the nodes registered, before idle is sampled. */
const SETTLE_MS = 5000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const n = (x: number): string => x.toLocaleString('en-US');

interface NodeList {
  items: {
    spec?: { taints?: { effect?: string }[] };
    status?: { conditions?: { type?: string; status?: string }[] };
  }[];
}

/** Polls until `count` nodes of the stack are Ready with no NoSchedule taint. */
async function nodesReady(stack: Stack, count: number, abort: Promise<never>): Promise<void> {
  const path = `/api/v1/nodes?labelSelector=${encodeURIComponent(stack.nodeSelector)}`;
  for (;;) {
    const r = await Promise.race([stack.client.expect('GET', path, 200), abort]);
    const list = JSON.parse(r.body.toString('utf8')) as NodeList;
    const ready = list.items.filter(
      (i) =>
        (i.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') &&
        !(i.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule'),
    ).length;
    if (ready >= count) return;
    await Promise.race([sleep(250), abort]);
  }
}

/** Creates `name` and waits for its `default` ServiceAccount (pods need it). */
async function namespace(client: BenchClient, name: string, abort: Promise<never>): Promise<void> {
  await client.expect('POST', '/api/v1/namespaces', 201, {
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    contentType: 'application/json',
    discardBody: true,
  });
  while ((await client.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status !== 200)
    await Promise.race([sleep(100), abort]);
}

interface DeploymentStatus {
  metadata?: { generation?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    readyReplicas?: number;
  };
}

/** Polls the Deployment until its rollout is complete (as `kubectl rollout status` decides). */
async function rolledOut(client: BenchClient, replicas: number, abort: Promise<never>): Promise<void> {
  const path = `/apis/apps/v1/namespaces/${DEPLOY_NAMESPACE}/deployments/${DEPLOYMENT}`;
  let last: DeploymentStatus['status'] = {};
  try {
    for (;;) {
      const r = await Promise.race([client.expect('GET', path, 200), abort]);
      const d = JSON.parse(r.body.toString('utf8')) as DeploymentStatus;
      const s = (last = d.status ?? {});
      if (
        (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
        s.updatedReplicas === replicas &&
        s.replicas === replicas &&
        s.availableReplicas === replicas
      )
        return;
      await Promise.race([sleep(200), abort]);
    }
  } catch (err) {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; Deployment status ${JSON.stringify(last)}; pods by phase ${await phases(client, DEPLOY_NAMESPACE)}`,
    );
  }
}

/** Pods of `namespace` whose phase is Running, from a whole list. */
async function runningPods(client: BenchClient, namespace: string): Promise<number> {
  const r = await client.expect('GET', `/api/v1/namespaces/${namespace}/pods`, 200);
  return (JSON.parse(r.body.toString('utf8')) as { items: PodView[] }).items.filter(
    (p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined,
  ).length;
}

/**
 * Waits until `replicas` pods of the Deployment's namespace are Running: when the watch says so
 * (checked every 100 ms), confirmed by a list (at most one a second); and, in case the watch
 * holds events back, by a list every 5 s anyway.
 */
async function allRunning(
  client: BenchClient,
  pods: PodTracker,
  replicas: number,
  abort: Promise<never>,
): Promise<void> {
  let listedAt = 0;
  for (;;) {
    const since = Date.now() - listedAt;
    if ((pods.running >= replicas && since >= 1000) || since >= 5000) {
      listedAt = Date.now();
      if ((await Promise.race([runningPods(client, DEPLOY_NAMESPACE), abort])) >= replicas) return;
    }
    await Promise.race([sleep(100), abort]);
  }
}

/** Polls until `namespace` has no pod left; a timeout names a few pods that stayed. */
async function podsGone(client: BenchClient, namespace: string, abort: Promise<never>): Promise<void> {
  try {
    while ((await Promise.race([podCount(client, namespace), abort])) > 0)
      await Promise.race([sleep(100), abort]);
  } catch (err) {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; left: ${await podSample(client, namespace)}`,
    );
  }
}

interface PodView {
  metadata: { name: string; deletionTimestamp?: string; finalizers?: string[] };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

/** The pods of `namespace` counted by phase, for an error message. */
async function phases(client: BenchClient, namespace: string): Promise<string> {
  const r = await client.request('GET', `/api/v1/namespaces/${namespace}/pods`);
  if (r.status !== 200) return `(pods list: HTTP ${r.status})`;
  const counts = new Map<string, number>();
  for (const p of (JSON.parse(r.body.toString('utf8')) as { items: PodView[] }).items) {
    const k = `${p.status?.phase ?? '?'}${p.metadata.deletionTimestamp === undefined ? '' : ' deleting'}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return JSON.stringify(Object.fromEntries(counts));
}

/** Up to three pods of `namespace`, each as `name phase node deleting finalizers`. */
async function podSample(client: BenchClient, namespace: string): Promise<string> {
  const r = await client.request('GET', `/api/v1/namespaces/${namespace}/pods?limit=3`);
  if (r.status !== 200) return `(pods list: HTTP ${r.status})`;
  const items = (JSON.parse(r.body.toString('utf8')) as { items: PodView[] }).items;
  return items
    .map(
      (p) =>
        `${p.metadata.name} ${p.status?.phase ?? '?'} on ${p.spec?.nodeName ?? '-'}${p.metadata.deletionTimestamp === undefined ? '' : ' deleting'}${(p.metadata.finalizers ?? []).length === 0 ? '' : ` finalizers ${p.metadata.finalizers?.join(',')}`}`,
    )
    .join('; ');
}

interface JobList {
  items: { status?: { conditions?: { type?: string; status?: string }[] } }[];
}

/** Polls until `count` Jobs of `namespace` are Complete (less often for more Jobs). */
async function jobsComplete(client: BenchClient, count: number, abort: Promise<never>): Promise<void> {
  const path = `/apis/batch/v1/namespaces/${JOBS_NAMESPACE}/jobs`;
  const interval = 200 + Math.min(800, count);
  for (;;) {
    const r = await Promise.race([client.expect('GET', path, 200), abort]);
    const list = JSON.parse(r.body.toString('utf8')) as JobList;
    const done = list.items.filter((j) =>
      (j.status?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True'),
    ).length;
    if (done >= count) return;
    await Promise.race([sleep(interval), abort]);
  }
}

/** Runs `step` and turns a failure into a `failed` row. */
async function attempt(
  stack: Stack,
  scenario: string,
  title: string,
  failures: string[],
  step: () => Promise<Row>,
): Promise<Row> {
  try {
    return await step();
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    failures.push(`${scenario} ${title} on ${stack.label}: ${message}`);
    return { scenario, case: `${title}: failed`, subject: stack.label, figures: {}, note: message };
  }
}

/** The idle step: the node simulator's and the whole stack's CPU over `seconds`, nothing to do. */
async function idle(stack: Stack, sizes: ClusterSizes, title: string): Promise<Row> {
  await Promise.race([sleep(SETTLE_MS), stack.lost]);
  const simPid = stack.nodesPid();
  const sim = new GroupSampler(() => (simPid === undefined ? [] : [simPid]));
  const all = new GroupSampler(() => stackPids(stack));
  await Promise.race([sleep(sizes.idleSeconds * 1000), stack.lost]);
  const s = sim.stop();
  const a = all.stop();
  const pct = (cpu: number): number => (cpu / sizes.idleSeconds) * 100;
  return {
    scenario: 'cluster idle',
    case: title,
    subject: stack.label,
    figures: {
      'nodes CPU % of a core': pct(s.cpuSeconds),
      'nodes RSS MiB': s.endRssMiB,
      'stack CPU % of a core': pct(a.cpuSeconds),
      'stack RSS MiB': a.endRssMiB,
    },
    note: `node simulator ${pct(s.cpuSeconds) <= 5 ? 'within' : 'over'} the 5% goal`,
  };
}

/**
 * Runs `steps` (in {@link CLUSTER_STEPS} order) on `stack`; resolves with one row per step.
 * Failures are appended to `failures`.
 */
export async function runClusterSteps(
  stack: Stack,
  steps: ReadonlySet<ClusterStep>,
  sizes: ClusterSizes,
  progress: (line: string) => void,
  failures: string[],
): Promise<Row[]> {
  const { client } = stack;
  const rows: Row[] = [];
  const limit = (what: string): Promise<never> => deadline(stack, sizes.stepTimeoutMs, what);
  const say = (row: Row): Row => {
    const figures = Object.entries(row.figures).map(([k, v]) => `${k} ${fmt(v)}`);
    progress(`  ${row.case}: ${figures.join(', ') || row.note}`);
    return row;
  };
  // Nodes are needed by everything else: they are brought up even when the step is not measured.
  const nodesTitle = `${n(sizes.nodes)} nodes registered and Ready`;
  let nodesOk = false;
  const nodesRow = await attempt(stack, 'cluster', nodesTitle, failures, () =>
    measureStep(stack, 'cluster', nodesTitle, async () => {
      await stack.startNodes(sizes.nodes);
      await nodesReady(stack, sizes.nodes, limit('nodes'));
      nodesOk = true;
      return {};
    }),
  );
  if (steps.has('nodes')) rows.push(say(nodesRow));
  if (!nodesOk) return rows;
  if (steps.has('idle')) {
    const title = `${n(sizes.nodes)} nodes idle for ${sizes.idleSeconds} s`;
    rows.push(say(await attempt(stack, 'cluster idle', title, failures, () => idle(stack, sizes, title))));
  }
  const r = sizes.replicas;
  if (steps.has('deployment') || steps.has('rollout') || steps.has('delete')) {
    await namespace(client, DEPLOY_NAMESPACE, limit('namespace'));
    const pods = await PodTracker.open(client, DEPLOY_NAMESPACE);
    try {
      const deployTitle = `Deployment of ${n(r)} replicas, until all Running`;
      let deployed = false;
      rows.push(
        say(
          await attempt(stack, 'cluster', deployTitle, failures, () =>
            measureStep(stack, 'cluster', deployTitle, async () => {
              const since = process.hrtime.bigint();
              await client.expect('POST', `/apis/apps/v1/namespaces/${DEPLOY_NAMESPACE}/deployments`, 201, {
                body: deploymentBody(r),
                contentType: 'application/json',
                discardBody: true,
              });
              await allRunning(client, pods, r, limit('deployment'));
              deployed = true;
              return pods.stepResult(since);
            }),
          ),
        ),
      );
      const rolloutTitle = `rolling update of the ${n(r)} replicas (25% surge, 25% unavailable)`;
      if (steps.has('rollout'))
        rows.push(
          say(
            await attempt(stack, 'cluster', rolloutTitle, failures, () =>
              measureStep(stack, 'cluster', rolloutTitle, async () => {
                if (!deployed) throw new Error('no Deployment to update');
                const since = process.hrtime.bigint();
                await client.expect(
                  'PATCH',
                  `/apis/apps/v1/namespaces/${DEPLOY_NAMESPACE}/deployments/${DEPLOYMENT}`,
                  200,
                  { body: rolloutPatch(2), contentType: 'application/merge-patch+json', discardBody: true },
                );
                await rolledOut(client, r, limit('rollout'));
                return pods.stepResult(since);
              }),
            ),
          ),
        );
      const deleteTitle = `delete the Deployment, until its last pod is gone`;
      if (steps.has('delete'))
        rows.push(
          say(
            await attempt(stack, 'cluster', deleteTitle, failures, () =>
              measureStep(stack, 'cluster', deleteTitle, async () => {
                if (!deployed) throw new Error('no Deployment to delete');
                await client.expect(
                  'DELETE',
                  `/apis/apps/v1/namespaces/${DEPLOY_NAMESPACE}/deployments/${DEPLOYMENT}`,
                  [200, 202],
                  {
                    body: JSON.stringify({
                      kind: 'DeleteOptions',
                      apiVersion: 'v1',
                      propagationPolicy: 'Background',
                    }),
                    contentType: 'application/json',
                    discardBody: true,
                  },
                );
                await podsGone(client, DEPLOY_NAMESPACE, limit('delete'));
                return {};
              }),
            ),
          ),
        );
    } finally {
      pods.close();
    }
  }
  if (steps.has('jobs')) rows.push(say(await jobsStep(stack, sizes, limit, failures)));
  return rows;
}

/** J one-pod Jobs, created 16 at a time, until every one is Complete. */
async function jobsStep(
  stack: Stack,
  sizes: ClusterSizes,
  limit: (what: string) => Promise<never>,
  failures: string[],
): Promise<Row> {
  const { client } = stack;
  const title = `${n(sizes.jobs)} Jobs of one pod, until all Complete`;
  return attempt(stack, 'cluster', title, failures, async () => {
    await namespace(client, JOBS_NAMESPACE, limit('namespace'));
    const pods = await PodTracker.open(client, JOBS_NAMESPACE);
    try {
      return await measureStep(stack, 'cluster', title, async () => {
        const since = process.hrtime.bigint();
        const abort = limit('jobs');
        await Promise.race([
          closedLoop(WRITERS, { maxOps: sizes.jobs }, (i) =>
            client.expect('POST', `/apis/batch/v1/namespaces/${JOBS_NAMESPACE}/jobs`, 201, {
              body: jobBody(i),
              contentType: 'application/json',
              discardBody: true,
            }),
          ),
          abort,
        ]);
        await jobsComplete(client, sizes.jobs, abort);
        return pods.stepResult(since);
      });
    } finally {
      pods.close();
    }
  });
}
