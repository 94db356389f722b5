/**
 * `kubectl get` of every kind with kube-apiserver's own columns (issue 5, point 3) prints the
 * headers and cells kube-apiserver's printers produce, plain and with `-o wide`, on the oldest and
 * newest kubectl the machine has; `kubectl get -w` shows a row change as it happens. The sample
 * objects are `fixtures/manifests/tables.yaml`, their status written through `/status`; the
 * expected output is `tables-kubectl.expected.ts`.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  adminFetch,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type AdminTls,
  type KubectlResult,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';
import { TABLE_CASES, type Cell, type TableCase } from './tables-kubectl.expected.js';

const VERSIONS = (['1.27', '1.33'] as const).filter((v: KubectlVersion) => kubectlPath(v) !== undefined);
const MANIFESTS = fileURLToPath(new URL('../../fixtures/manifests/tables.yaml', import.meta.url));
/** kubectl processes at once: enough to overlap their start-up, few enough for two cores. */
const CONCURRENCY = 4;

/** Resource path of each sample kind: plural and whether it is namespaced. */
const RESOURCES: Readonly<Record<string, readonly [plural: string, namespaced: boolean]>> = {
  Namespace: ['namespaces', false],
  Node: ['nodes', false],
  Pod: ['pods', true],
  Service: ['services', true],
  Endpoints: ['endpoints', true],
  ConfigMap: ['configmaps', true],
  Secret: ['secrets', true],
  ServiceAccount: ['serviceaccounts', true],
  Deployment: ['deployments', true],
  ReplicaSet: ['replicasets', true],
  StatefulSet: ['statefulsets', true],
  DaemonSet: ['daemonsets', true],
  Job: ['jobs', true],
  CronJob: ['cronjobs', true],
  Ingress: ['ingresses', true],
  Event: ['events', true],
  Lease: ['leases', true],
  Role: ['roles', true],
  ClusterRole: ['clusterroles', false],
  RoleBinding: ['rolebindings', true],
  ClusterRoleBinding: ['clusterrolebindings', false],
  StorageClass: ['storageclasses', false],
  PersistentVolume: ['persistentvolumes', false],
  PersistentVolumeClaim: ['persistentvolumeclaims', true],
  CustomResourceDefinition: ['customresourcedefinitions', false],
};

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly status?: unknown;
}

/** The URL of an object (or of its collection when `name` is undefined). */
function objectUrl(base: string, m: Manifest, name?: string): string {
  const [plural, namespaced] = RESOURCES[m.kind] ?? [];
  if (plural === undefined) throw new Error(`tables.yaml: no resource path for ${m.kind}`);
  const root = m.apiVersion.includes('/') ? `/apis/${m.apiVersion}` : `/api/${m.apiVersion}`;
  const ns = namespaced === true ? `/namespaces/${m.metadata.namespace}` : '';
  return `${base}${root}${ns}/${plural}${name === undefined ? '' : `/${name}`}`;
}

/** A merge patch of `/status` (what controllers and kubelets write). */
async function patchStatus(server: TestServer, tls: AdminTls, m: Manifest, status: unknown): Promise<void> {
  const res = await adminFetch(`${objectUrl(server.url, m, m.metadata.name)}/status`, tls, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status }),
  });
  expect(res.status, `${m.kind} ${m.metadata.name} status: ${res.body}`).toBe(200);
}

/** Marks a sample that is deleted right after it is created, to print it while it terminates. */
const DELETE_ANNOTATION = 'tables.capstan.test/delete';

/**
 * Creates every manifest in order, writes the status of those that carry one, and deletes those
 * marked with {@link DELETE_ANNOTATION}.
 */
async function createSamples(server: TestServer, tls: AdminTls): Promise<Manifest[]> {
  const docs = parseAllDocuments(await readFile(MANIFESTS, 'utf8')).map((d) => d.toJS() as Manifest);
  for (const m of docs) {
    const res = await adminFetch(objectUrl(server.url, m), tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(m),
    });
    expect(res.status, `create ${m.kind} ${m.metadata.name}: ${res.body}`).toBe(201);
    if (m.status !== undefined) await patchStatus(server, tls, m, m.status);
    if (m.metadata.annotations?.[DELETE_ANNOTATION] === 'true') {
      const deleted = await adminFetch(objectUrl(server.url, m, m.metadata.name), tls, { method: 'DELETE' });
      // 200: a finalizer holds the object, now terminating.
      expect(deleted.status, `delete ${m.kind} ${m.metadata.name}: ${deleted.body}`).toBe(200);
    }
  }
  return docs;
}

/** Runs `tasks` with at most `limit` in flight; results in task order. */
async function pooled<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < tasks.length; i = next++) results[i] = await (tasks[i] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/**
 * Splits a kubectl table into header names and rows of cells by the header's column offsets:
 * kubectl aligns every cell under its header, so this keeps empty cells and cells with single
 * spaces ("*\/5 * * * *", "80, 443") that splitting on runs of spaces would lose.
 */
function parseTable(text: string): { header: string[]; rows: string[][] } {
  const [headerLine = '', ...lines] = text.split('\n').filter((l) => l.trim() !== '');
  const starts = [...headerLine.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index);
  const header = starts.map((s, i) => headerLine.slice(s, starts[i + 1]).trim());
  const rows = lines.map((line) => starts.map((s, i) => line.slice(s, starts[i + 1]).trim()));
  return { header, rows };
}

/** Asserts one table: the exact header, and each sample's row cell by cell. */
function expectTable(
  result: KubectlResult,
  resource: string,
  header: readonly string[],
  samples: readonly { name: string; rowKey?: readonly [string, string] | undefined; row: readonly Cell[] }[],
): void {
  expect(result.code, result.stderr).toBe(0);
  const table = parseTable(result.stdout);
  expect(table.header).toEqual(header);
  for (const sample of samples) {
    const [keyColumn, key] = header.includes('NAME')
      ? ['NAME', sample.name]
      : (sample.rowKey ?? ['NAME', sample.name]);
    const keyAt = header.indexOf(keyColumn);
    const actual = table.rows.find((r) => r[keyAt] === key);
    expect(actual, `no row ${sample.name} in:\n${result.stdout}`).toBeDefined();
    expect(actual).toHaveLength(sample.row.length);
    sample.row.forEach((want, i) => {
      const got = actual?.[i] ?? '';
      const label = `${resource} ${sample.name} ${header[i]} in:\n${result.stdout}`;
      if (typeof want === 'string') expect(got, label).toBe(want);
      else expect(got, label).toMatch(want);
    });
  }
}

let server: TestServer;
let tls: AdminTls;
let samples: Manifest[];
beforeAll(async () => {
  if (VERSIONS.length === 0) return;
  server = await startTestServer({ args: ['--service-cluster-ip-range=10.96.0.0/16'] });
  tls = adminTls(server.kubeconfigPath);
  samples = await createSamples(server, tls);
});
afterAll(async () => {
  await server?.close();
});

describe.skipIf(VERSIONS.length === 0).each(VERSIONS)('kubectl %s get', (version) => {
  const outputs = new Map<string, { plain: KubectlResult; wide: KubectlResult }>();
  const args = (c: TableCase): string[] =>
    c.namespace === undefined ? ['get', c.resource] : ['get', c.resource, '-n', c.namespace];

  beforeAll(async () => {
    // Discovery once, so the parallel runs below read a warm cache instead of racing to fill it.
    const warm = await runKubectl(version, ['api-resources', '-o', 'name'], server.kubeconfigPath);
    expect(warm.code, warm.stderr).toBe(0);
    const tasks = TABLE_CASES.flatMap((c) => [
      () => runKubectl(version, args(c), server.kubeconfigPath),
      () => runKubectl(version, [...args(c), '-o', 'wide'], server.kubeconfigPath),
    ]);
    const results = await pooled(tasks, CONCURRENCY);
    TABLE_CASES.forEach((c, i) => {
      outputs.set(c.resource, {
        plain: results[2 * i] as KubectlResult,
        wide: results[2 * i + 1] as KubectlResult,
      });
    });
  });

  it.each(TABLE_CASES.map((c) => [c.resource, c] as const))('%s', (_resource, c) => {
    const out = outputs.get(c.resource);
    expect(out).toBeDefined();
    if (out === undefined) return;
    const rows = [c, ...(c.more ?? [])];
    expectTable(out.plain, c.resource, c.header, rows);
    expectTable(
      out.wide,
      c.resource,
      c.wideHeader,
      rows.map((x) => ({ ...x, row: x.wideRow })),
    );
  });
});

/** A `kubectl get -w` child whose output a test can wait on. */
function startWatch(version: KubectlVersion, args: readonly string[]) {
  const child = spawn(kubectlPath(version) as string, ['--kubeconfig', server.kubeconfigPath, ...args], {
    env: { ...process.env, KUBECONFIG: '' },
  });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters) if (w.re.test(out)) w.resolve();
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return {
    seen: (re: RegExp): Promise<void> =>
      new Promise((resolve, reject) => {
        if (re.test(out)) return resolve();
        waiters.push({ re, resolve });
        setTimeout(() => reject(new Error(`no ${re} in:\n${out}\n${err}`)), 20_000).unref();
      }),
    stop: () => child.kill(),
  };
}

/** One `get -w` check: the status change it makes and the row that must then be printed. */
interface WatchCase {
  readonly kind: string;
  readonly name: string;
  readonly args: readonly string[];
  readonly header: RegExp;
  readonly status: unknown;
  readonly row: RegExp;
}

const running = (name: string, image: string, restartCount = 0) => ({
  name,
  image,
  imageID: '',
  ready: true,
  restartCount,
  state: { running: {} },
});

/**
 * Per version, different changes (the 1.33 checks run after the 1.27 ones on the same objects).
 * Rows printed by a watch are aligned on their own, so these match runs of spaces.
 */
const WATCHED: Readonly<Record<string, readonly WatchCase[]>> = {
  '1.27': [
    {
      kind: 'Deployment',
      name: 'web',
      args: ['deployments', '-n', 'tables'],
      header: /^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$/m,
      status: { readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 0 },
      row: /^web +3\/3 +3 +3 +\S+$/m,
    },
    {
      kind: 'Pod',
      name: 'web-0',
      args: ['pods', '-n', 'tables'],
      header: /^NAME +READY +STATUS +RESTARTS +AGE$/m,
      status: {
        containerStatuses: [running('app', 'nginx:1.25'), running('sidecar', 'busybox:1.36', 5)],
      },
      row: /^web-0 +2\/2 +Running +5 +\S+$/m,
    },
    {
      kind: 'Node',
      name: 'node-2',
      args: ['nodes', '-o', 'wide'],
      header:
        /^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME$/m,
      status: {
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.11' }],
        nodeInfo: {
          kubeletVersion: 'v1.33.1',
          osImage: 'Ubuntu 24.04 LTS',
          kernelVersion: '6.8.0',
          containerRuntimeVersion: 'cri-o://1.30.0',
        },
      },
      row: /^node-2 +Ready +<none> +\S+ +v1\.33\.1 +10\.0\.0\.11 +<none> +Ubuntu 24\.04 LTS +6\.8\.0 +cri-o:\/\/1\.30\.0$/m,
    },
  ],
  '1.33': [
    {
      kind: 'Deployment',
      name: 'web',
      args: ['deployments', '-n', 'tables'],
      header: /^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$/m,
      status: { readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 2 },
      row: /^web +1\/3 +3 +1 +\S+$/m,
    },
    {
      kind: 'Pod',
      name: 'web-0',
      args: ['pods', '-n', 'tables'],
      header: /^NAME +READY +STATUS +RESTARTS +AGE$/m,
      status: {
        containerStatuses: [
          running('app', 'nginx:1.25'),
          {
            name: 'sidecar',
            image: 'busybox:1.36',
            imageID: '',
            ready: false,
            restartCount: 6,
            state: { waiting: { reason: 'ImagePullBackOff' } },
          },
        ],
      },
      row: /^web-0 +1\/2 +ImagePullBackOff +6 +\S+$/m,
    },
    {
      kind: 'Node',
      name: 'node-2',
      args: ['nodes', '-o', 'wide'],
      header:
        /^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME$/m,
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] },
      row: /^node-2 +NotReady +<none> +\S+ +v1\.33\.1 +10\.0\.0\.11 +<none> +Ubuntu 24\.04 LTS +6\.8\.0 +cri-o:\/\/1\.30\.0$/m,
    },
  ],
};

// After the `get` suites: these change the samples' status.
describe.skipIf(VERSIONS.length === 0).each(VERSIONS)('kubectl %s get -w', (version) => {
  it.each((WATCHED[version] ?? []).map((w) => [[...w.args, '-w'].join(' '), w] as const))(
    'get %s prints the changed row',
    async (_title, w) => {
      const m = samples.find((s) => s.kind === w.kind && s.metadata.name === w.name);
      if (m === undefined) throw new Error(`tables.yaml has no ${w.kind} ${w.name}`);
      const watch = startWatch(version, ['get', ...w.args, '-w']);
      try {
        await watch.seen(w.header);
        // The list comes first; a row printed after the status change is the watch event.
        await watch.seen(new RegExp(`^${w.name} `, 'm'));
        await patchStatus(server, tls, m, w.status);
        await watch.seen(w.row);
      } finally {
        watch.stop();
      }
    },
  );
});
