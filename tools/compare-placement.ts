/**
 * Issue 30's placement comparison: `capstan scheduler` and another scheduler (kube-scheduler
 * v1.33, built outside the repository) place the same pods on the same simulated nodes, one
 * after the other, case by case. Where the filters leave one node, both must bind the pod to that
 * node; where the scores decide, both must spread the pods the same way (the same pod counts per
 * node, or per zone, sorted: ties between equal nodes may break either way).
 *
 *   npm run build
 *   node dist/tools/compare-placement.js --scheduler-binary=/path/to/kube-scheduler
 *
 * Six simulated nodes in three zones (`capstan agent --simulate`, 32 CPUs each) on a `capstan
 * server` without an in-process scheduler, as `capstan bench scheduler` starts them. For each case
 * and scheduler: the case's node changes (labels, taints, cordons), a fresh namespace with the
 * case's fixture pods bound by `nodeName`, then the scheduler is started, the case's pods are
 * created one at a time (each waited for), the placements read, and everything undone. The exit
 * code is 0 when every case matched its expectation under both schedulers.
 */
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import { BenchClient } from '../src/bench/client.js';
import { createNamespace, deleteNamespace } from '../src/bench/context.js';
import { startBenchCluster, zoneOf } from '../src/bench/scheduler/cluster.js';
import { BindWatch } from '../src/bench/scheduler/binds.js';
import { schedulerLabel, spawnScheduler, type SchedulerKind } from '../src/bench/scheduler/process.js';
import { Teardown } from '../src/bench/teardown.js';

const NODES = 6;
const ZONES = 3;
const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';
const BIND_TIMEOUT_MS = 60_000;

type Json = Record<string, unknown>;

/** What a case expects of each scheduler's placements. */
type Expect =
  /** Every pod on this node (index into the node list). */
  | { readonly node: number }
  /** Pods per node, sorted (over these nodes only, when given). */
  | { readonly perNode: readonly number[]; readonly on?: readonly number[] }
  /** Pods per zone, sorted. */
  | { readonly perZone: readonly number[] };

/** Node patches (merge patches by node index) applied before a case, and their undo after. */
type NodePatches = (nodes: readonly string[]) => { index: number; patch: Json; undo: Json }[];

interface Case {
  readonly name: string;
  readonly nodes?: NodePatches;
  /** Pods bound by nodeName before the scheduler starts (by node index). */
  readonly fixtures?: readonly { readonly node: number; readonly pod: Json }[];
  /** The pods the scheduler places, created in order. */
  readonly pods: readonly Json[];
  readonly expect: Expect;
}

/** A busybox pod spec the simulated nodes run; `extra` is merged into the spec. */
function pod(name: string, labels: Record<string, string> = {}, spec: Json = {}, cpu = '100m'): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }],
      ...spec,
    },
  };
}

/** Every node but `keep`, patched with `patch` and undone with `undo`. */
function allBut(keep: number, patch: Json, undo: Json): NodePatches {
  return (nodes) => nodes.map((_, index) => ({ index, patch, undo })).filter((p) => p.index !== keep);
}

const CASES: readonly Case[] = [
  {
    name: 'NodeSelector: one node has the label',
    nodes: () => [
      {
        index: 3,
        patch: { metadata: { labels: { 'placement/only': 'yes' } } },
        undo: { metadata: { labels: { 'placement/only': null } } },
      },
    ],
    pods: [pod('p', {}, { nodeSelector: { 'placement/only': 'yes' } })],
    expect: { node: 3 },
  },
  {
    name: 'TaintToleration: one node is untainted',
    nodes: allBut(
      4,
      { spec: { taints: [{ key: 'placement/taint', value: 'x', effect: 'NoSchedule' }] } },
      { spec: { taints: null } },
    ),
    pods: [pod('p')],
    expect: { node: 4 },
  },
  {
    name: 'NodeUnschedulable: all other nodes cordoned',
    nodes: allBut(1, { spec: { unschedulable: true } }, { spec: { unschedulable: null } }),
    pods: [pod('p')],
    expect: { node: 1 },
  },
  {
    name: 'NodeAffinity (required): zone-2 minus one hostname',
    pods: [
      pod(
        'p',
        {},
        {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: ZONE, operator: 'In', values: ['zone-2'] },
                      { key: HOSTNAME, operator: 'NotIn', values: ['@5'] },
                    ],
                  },
                ],
              },
            },
          },
        },
      ),
    ],
    expect: { node: 2 },
  },
  {
    name: 'NodeResourcesFit: only one node has 4 CPUs free',
    fixtures: [1, 2, 3, 4, 5].map((node) => ({ node, pod: pod(`fill-${node}`, {}, {}, '30') })),
    pods: [pod('p', {}, {}, '4')],
    expect: { node: 0 },
  },
  {
    name: 'InterPodAffinity (required anti-affinity): one node without app=x',
    fixtures: [0, 1, 2, 3, 4].map((node) => ({ node, pod: pod(`x-${node}`, { app: 'x' }) })),
    pods: [
      pod(
        'p',
        {},
        {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { labelSelector: { matchLabels: { app: 'x' } }, topologyKey: HOSTNAME },
              ],
            },
          },
        },
      ),
    ],
    expect: { node: 5 },
  },
  {
    name: 'InterPodAffinity (required affinity): next to the app=y pod',
    fixtures: [{ node: 3, pod: pod('y', { app: 'y' }) }],
    pods: [
      pod(
        'p',
        {},
        {
          affinity: {
            podAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { labelSelector: { matchLabels: { app: 'y' } }, topologyKey: HOSTNAME },
              ],
            },
          },
        },
      ),
    ],
    expect: { node: 3 },
  },
  {
    name: 'NodePorts: one node has hostPort 8080 free',
    fixtures: [0, 1, 3, 4, 5].map((node) => ({
      node,
      pod: pod(
        `hp-${node}`,
        {},
        {
          containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80, hostPort: 8080 }] }],
        },
      ),
    })),
    pods: [
      pod(
        'p',
        {},
        {
          containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80, hostPort: 8080 }] }],
        },
      ),
    ],
    expect: { node: 2 },
  },
  {
    name: 'scores: 12 pods of 1 CPU on 6 idle nodes (LeastAllocated)',
    pods: Array.from({ length: 12 }, (_, i) => pod(`p${i}`, {}, {}, '1')),
    expect: { perNode: [2, 2, 2, 2, 2, 2] },
  },
  {
    name: 'scores: 6 pods preferring two labelled nodes',
    nodes: () =>
      [1, 4].map((index) => ({
        index,
        patch: { metadata: { labels: { 'placement/pref': 'yes' } } },
        undo: { metadata: { labels: { 'placement/pref': null } } },
      })),
    pods: Array.from({ length: 6 }, (_, i) =>
      pod(
        `p${i}`,
        {},
        {
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  preference: {
                    matchExpressions: [{ key: 'placement/pref', operator: 'In', values: ['yes'] }],
                  },
                },
              ],
            },
          },
        },
      ),
    ),
    expect: { perNode: [3, 3], on: [1, 4] },
  },
  {
    name: 'PodTopologySpread: 9 pods, zone maxSkew 1',
    pods: Array.from({ length: 9 }, (_, i) =>
      pod(
        `p${i}`,
        { app: 'spread' },
        {
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: ZONE,
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: { app: 'spread' } },
            },
          ],
        },
      ),
    ),
    expect: { perZone: [3, 3, 3] },
  },
];

/** Replaces `@<i>` node references in a pod with the node names. */
function withNodeNames(body: Json, nodes: readonly string[]): Json {
  return JSON.parse(
    JSON.stringify(body).replace(/"@(\d+)"/g, (_, i: string) => JSON.stringify(nodes[Number(i)])),
  ) as Json;
}

/** Sorted counts of `values`. */
function counts(values: readonly string[]): number[] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m.values()].sort((a, b) => a - b);
}

/** What the placements show, in the expectation's terms, and whether they meet it. */
function judge(
  expect: Expect,
  placed: readonly string[],
  nodes: readonly string[],
): { shown: string; ok: boolean } {
  if ('node' in expect) {
    const want = nodes[expect.node] as string;
    const shown = [...new Set(placed)].join(',');
    return { shown, ok: placed.every((n) => n === want) };
  }
  if ('perZone' in expect) {
    const zones = placed.map((n) => zoneOf(nodes.indexOf(n), ZONES));
    const got = counts(zones);
    return {
      shown: `per zone ${got.join('/')}`,
      ok: got.join() === [...expect.perZone].sort((a, b) => a - b).join(),
    };
  }
  const got = counts(placed);
  const allowed = expect.on?.map((i) => nodes[i]);
  const onAllowed = allowed === undefined || placed.every((n) => allowed.includes(n));
  return {
    shown: `per node ${got.join('/')}${onAllowed ? '' : ' (off the preferred nodes)'}`,
    ok: onAllowed && got.join() === [...expect.perNode].sort((a, b) => a - b).join(),
  };
}

async function patchNode(client: BenchClient, name: string, patch: Json): Promise<void> {
  await client.expect('PATCH', `/api/v1/nodes/${name}`, 200, {
    body: JSON.stringify(patch),
    contentType: 'application/merge-patch+json',
    discardBody: true,
  });
}

/** One case under one scheduler: the node each placed pod went to, in creation order. */
async function runCase(
  client: BenchClient,
  kind: SchedulerKind,
  settings: { kubeconfig: string; qps: number; burst: number; dir: string },
  c: Case,
  nodes: readonly string[],
): Promise<string[]> {
  const ns = await createNamespace(client, 'placement');
  const patches = c.nodes?.(nodes) ?? [];
  let watch: BindWatch | undefined;
  let proc: Awaited<ReturnType<typeof spawnScheduler>> | undefined;
  try {
    await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
      discardBody: true,
    });
    for (const p of patches) await patchNode(client, nodes[p.index] as string, p.patch);
    for (const f of c.fixtures ?? []) {
      const body = withNodeNames(f.pod, nodes);
      (body['spec'] as Json)['nodeName'] = nodes[f.node];
      await client.expect('POST', `/api/v1/namespaces/${ns}/pods`, 201, {
        body: JSON.stringify(body),
        discardBody: true,
      });
    }
    watch = await BindWatch.open(client, ns);
    proc = await spawnScheduler(kind, settings);
    const exited = proc.exited.then((why): never => {
      throw new Error(`${schedulerLabel(kind)} exited: ${why}`);
    });
    exited.catch(() => undefined);
    const placed: string[] = [];
    for (const body of c.pods) {
      const b = withNodeNames(body, nodes);
      const name = (b['metadata'] as { name: string }).name;
      await client.expect('POST', `/api/v1/namespaces/${ns}/pods`, 201, {
        body: JSON.stringify(b),
        discardBody: true,
      });
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${name} unbound after ${BIND_TIMEOUT_MS / 1000} s`)),
          BIND_TIMEOUT_MS,
        ).unref(),
      );
      await watch.allBound([name], Promise.race([exited, timeout]));
      placed.push(watch.nodeOf(name) ?? '?');
    }
    return placed;
  } finally {
    watch?.close();
    await proc?.stop();
    await client
      .request('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`)
      .catch(() => undefined);
    await deleteNamespace(client, ns);
    for (const p of patches) await patchNode(client, nodes[p.index] as string, p.undo).catch(() => undefined);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const binary = argv.find((a) => a.startsWith('--scheduler-binary='))?.slice('--scheduler-binary='.length);
  if (binary === undefined || binary === '') {
    console.error('usage: node dist/tools/compare-placement.js --scheduler-binary=/path/to/kube-scheduler');
    return 2;
  }
  const kinds: SchedulerKind[] = [{ kind: 'capstan' }, { kind: 'binary', binary }];
  const teardown = new Teardown();
  try {
    const cluster = await startBenchCluster({ nodes: NODES, zones: ZONES, serverArgs: [] }, teardown, (l) =>
      console.error(l),
    );
    // Node index i is slot i: its zone is zoneOf(i, ZONES).
    const nodes = [...cluster.nodes].sort(
      (a, b) => Number(/(\d+)$/.exec(a)?.[1] ?? 0) - Number(/(\d+)$/.exec(b)?.[1] ?? 0),
    );
    const client = new BenchClient(readKubeconfigCredentials(cluster.kubeconfig), 1);
    teardown.add(() => client.close());
    const settings = { kubeconfig: cluster.kubeconfig, qps: 100, burst: 200, dir: cluster.dir };
    const labels = kinds.map(schedulerLabel);
    console.log(`| case | expected | ${labels.join(' | ')} | same outcome |`);
    console.log(`| --- | --- | ${labels.map(() => '---').join(' | ')} | --- |`);
    let failed = 0;
    for (const c of CASES) {
      const results: { shown: string; ok: boolean }[] = [];
      for (const kind of kinds) {
        try {
          results.push(judge(c.expect, await runCase(client, kind, settings, c, nodes), nodes));
        } catch (err) {
          results.push({ shown: `failed: ${err instanceof Error ? err.message : String(err)}`, ok: false });
        }
      }
      const expected =
        'node' in c.expect
          ? (nodes[c.expect.node] as string)
          : 'perZone' in c.expect
            ? `per zone ${c.expect.perZone.join('/')}`
            : `per node ${c.expect.perNode.join('/')}`;
      const same = results.every((r) => r.ok);
      if (!same) failed++;
      console.log(
        `| ${c.name} | ${expected} | ${results.map((r) => `${r.ok ? 'pass' : 'FAIL'}: ${r.shown}`).join(' | ')} | ${same ? 'yes' : 'no'} |`,
      );
    }
    console.error(
      failed === 0 ? `all ${CASES.length} cases placed alike` : `${failed} of ${CASES.length} cases differ`,
    );
    return failed === 0 ? 0 : 1;
  } finally {
    await teardown.run();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : String(err));
    process.exit(1);
  },
);
