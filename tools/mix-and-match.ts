/**
 * Mix and match (issue 29 item 5): the same workload checks, through kubectl, in two directions.
 *
 * - (a) Capstan's components on kube's API server: etcd + kube-apiserver, with
 *   `capstan controller-manager --controllers=* --use-service-account-credentials`,
 *   `capstan scheduler` and `capstan agent --simulate --nodes=3`, each as its own identity.
 * - (b) kube's components on Capstan's API server: a bare `capstan server --controllers=` (no
 *   in-process controller and no in-process scheduler), with kube-controller-manager
 *   (`--controllers=* --allocate-node-cidrs --use-service-account-credentials`), kube-scheduler
 *   and `capstan agent --simulate --nodes=3` as the nodes.
 *
 * Every identity is a static token (`--token-auth-file` on both servers): the administrator the
 * checks run as (`system:masters`), `system:kube-controller-manager`, `system:kube-scheduler`,
 * and the simulated nodes' agent, bound to kube's `system:node` ClusterRole (one agent speaks for
 * three nodes, so the Node authorizer, which knows one node per identity, cannot be used).
 * Each check runs in its own namespace, all at once; the table compares the two directions.
 *
 *   npm run build && node dist/tools/mix-and-match.js --kube-bin-dir=/work/refbuild/bin
 *       [--kubectl=/usr/lib/google-cloud-sdk/bin/kubectl.1.33] [--direction=a|b|both]
 *       [--timeout-seconds=240] [--log-dir=DIR]
 *
 * Needs the reference binaries (built outside the repository), openssl and kubectl 1.33; it is
 * run by hand, not by the test suite. Exit code 0 when every check passed in every direction run.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Children, freePort, type Child } from '../src/bench/cluster/children.js';
import {
  SERVICE_CIDR,
  kubeControllerManagerArgs,
  startKubeApiServer,
  waitFor,
  writeCredentials,
  type Credentials,
  type TokenIdentity,
} from '../src/bench/cluster/kube-stack.js';
import { BenchClient } from '../src/bench/client.js';
import { capstanEntry, spawnScheduler } from '../src/bench/scheduler/process.js';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import { packageVersion } from '../src/server/package-version.js';

const execFileP = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// Arguments (pure)

/** The tool's command line. */
export interface MixArgs {
  readonly kubeBinDir: string;
  readonly kubectl: string;
  readonly directions: readonly DirectionId[];
  /** How long one check may take. */
  readonly timeoutSeconds: number;
  /** Where each process's stderr is kept (default: a temporary directory, removed at the end). */
  readonly logDir: string | undefined;
}

export type DirectionId = 'a' | 'b';

export const DEFAULT_KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

/**
 * Parses `--name=value` and `--name value`.
 * @throws Error on an unknown flag, a missing value or a bad number.
 */
export function parseMixArgs(argv: readonly string[]): MixArgs {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (m === null) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const name = m[1] ?? '';
    if (!['kube-bin-dir', 'kubectl', 'direction', 'timeout-seconds', 'log-dir'].includes(name))
      throw new Error(`unknown flag --${name}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    values.set(name, value);
  }
  const kubeBinDir = values.get('kube-bin-dir');
  if (kubeBinDir === undefined || kubeBinDir === '') throw new Error('--kube-bin-dir is required');
  const direction = values.get('direction') ?? 'both';
  if (!['a', 'b', 'both'].includes(direction)) throw new Error('--direction is a, b or both');
  const timeoutSeconds = Number(values.get('timeout-seconds') ?? 240);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new Error('--timeout-seconds must be a positive number');
  return {
    kubeBinDir,
    kubectl: values.get('kubectl') ?? DEFAULT_KUBECTL,
    directions: direction === 'both' ? ['a', 'b'] : [direction as DirectionId],
    timeoutSeconds,
    logDir: values.get('log-dir'),
  };
}

// ---------------------------------------------------------------------------------------------
// The table (pure)

/** One check's outcome in one direction. */
export interface Outcome {
  readonly pass: boolean;
  /** Why it failed (empty when it passed). */
  readonly detail: string;
  readonly seconds: number;
}

/** Every check's outcome per direction run; a direction not run has no entry. */
export type Results = ReadonlyMap<DirectionId, ReadonlyMap<string, Outcome>>;

const DIRECTION_TITLES: Record<DirectionId, string> = {
  a: '(a) Capstan components on kube-apiserver',
  b: '(b) kube components on Capstan server',
};

function cell(o: Outcome | undefined): string {
  if (o === undefined) return 'not run';
  return `${o.pass ? 'pass' : 'FAIL'} (${o.seconds.toFixed(1)} s)`;
}

/**
 * A Markdown table: a row per check, a column per direction, and whether the directions agree
 * (`-` when only one ran); then the failures' details.
 */
export function renderTable(checks: readonly string[], results: Results): string {
  const dirs = [...results.keys()];
  const lines = [
    `| check | ${dirs.map((d) => DIRECTION_TITLES[d]).join(' | ')} | same outcome |`,
    `| --- | ${dirs.map(() => '---').join(' | ')} | --- |`,
  ];
  const failures: string[] = [];
  for (const check of checks) {
    const outcomes = dirs.map((d) => results.get(d)?.get(check));
    const same =
      dirs.length < 2
        ? '-'
        : outcomes.every((o) => o !== undefined && o.pass === outcomes[0]?.pass)
          ? 'yes'
          : 'NO';
    lines.push(`| ${check} | ${outcomes.map(cell).join(' | ')} | ${same} |`);
    dirs.forEach((d, i) => {
      const o = outcomes[i];
      if (o !== undefined && !o.pass) failures.push(`- (${d}) ${check}: ${o.detail}`);
    });
  }
  return [...lines, ...(failures.length === 0 ? [] : ['', 'Failures:', ...failures])].join('\n');
}

/** Whether every check ran and passed in every direction. */
export function allPassed(checks: readonly string[], results: Results): boolean {
  return [...results.values()].every((r) => checks.every((c) => r.get(c)?.pass === true));
}

// ---------------------------------------------------------------------------------------------
// kubectl

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** kubectl as one identity. */
class Kubectl {
  constructor(
    readonly file: string,
    readonly kubeconfig: string,
  ) {}

  /**
   * Runs `kubectl args` (stdin `input`); resolves with stdout.
   * @throws Error with kubectl's stderr when it exits non-zero.
   */
  run(args: readonly string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.file, [`--kubeconfig=${this.kubeconfig}`, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
      child.stdin.on('error', () => undefined);
      child.stdin.end(input ?? '');
      child.once('error', reject);
      // 'close', not 'exit': stdout may still hold output when the process has exited (that was
      // the "empty output" seen under load).
      child.once('close', (code) =>
        code === 0
          ? resolve(out)
          : reject(
              new Error(
                `kubectl ${args.join(' ')}: exit ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`,
              ),
            ),
      );
    });
  }

  /**
   * `kubectl ... -o json`, parsed.
   * @throws Error naming the command when its output is not JSON.
   */
  async json<T>(args: readonly string[], input?: string): Promise<T> {
    const out = await this.run([...args, '-o', 'json'], input);
    try {
      return JSON.parse(out) as T;
    } catch (err) {
      throw new Error(`kubectl ${args.join(' ')}: not JSON (${JSON.stringify(out.slice(0, 80))})`, {
        cause: err,
      });
    }
  }

  /** `kubectl create -f -` of objects. */
  async create(...objects: readonly object[]): Promise<void> {
    await this.run(['create', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));
  }

  /** `kubectl create -f -` of one object; the object created (its uid). */
  createOne(object: object): Promise<Obj> {
    return this.json<Obj>(['create', '-f', '-'], JSON.stringify(object));
  }

  /** Whether `kubectl get` finds the object. */
  async exists(args: readonly string[]): Promise<boolean> {
    return (await this.run(['get', ...args, '--ignore-not-found', '-o', 'name'])).trim() !== '';
  }
}

/**
 * Polls `probe` every 500 ms until it returns true.
 * @throws Error naming `what` and the probe's last answer (or error) when the deadline passes.
 */
async function until(what: string, deadline: number, probe: () => Promise<true | string>): Promise<void> {
  let last = '';
  for (;;) {
    try {
      const r = await probe();
      if (r === true) return;
      last = r;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last}`);
    await sleep(500);
  }
}

// ---------------------------------------------------------------------------------------------
// The checks

interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: { kind: string; name: string; uid: string }[];
}
interface Obj {
  metadata: Meta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface List<T = Obj> {
  items: T[];
}

/** What a check gets: kubectl as the administrator, its namespace and its deadline. */
interface CheckContext {
  readonly k: Kubectl;
  readonly ns: string;
  readonly deadline: number;
  /** `--timeout=` for kubectl's own waits (the time left). */
  readonly timeout: () => string;
}

interface Check {
  readonly name: string;
  run(c: CheckContext): Promise<void>;
}

const IMAGE = 'registry.k8s.io/pause:3.10';
const LABEL = 'app';

function podSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { containers: [{ name: 'main', image: IMAGE }], terminationGracePeriodSeconds: 1, ...extra };
}

function withKind<T extends object>(
  apiVersion: string,
  kind: string,
  o: T,
): T & { apiVersion: string; kind: string } {
  return { apiVersion, kind, ...o };
}

const cm = (ns: string, name: string, meta: Partial<Meta> = {}): object =>
  withKind('v1', 'ConfigMap', { metadata: { name, namespace: ns, ...meta }, data: { k: 'v' } });

/** An owner reference to the ConfigMap `owner`. */
function ownedBy(owner: Obj, blockOwnerDeletion = false): Partial<Meta> {
  return {
    ownerReferences: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: owner.metadata.name,
        uid: owner.metadata.uid ?? '',
        ...(blockOwnerDeletion ? { blockOwnerDeletion: true } : {}),
      } as { kind: string; name: string; uid: string },
    ],
  };
}

async function rollout(c: CheckContext, what: string): Promise<void> {
  await c.k.run(['rollout', 'status', what, '-n', c.ns, c.timeout()]);
}

const HOLD = 'mix-and-match.capstan.dev/hold';

/** The checks, in the table's order. */
export const CHECK_NAMES = [
  'namespace gets default SA and kube-root-ca.crt',
  'Deployment: rollout, set image, rollout undo, scale',
  'Service: EndpointSlice lists the ready pod IPs',
  'StatefulSet rolls out (2 ordinals)',
  'DaemonSet: one ready pod per node (3)',
  'Job completes (wait --for=condition=complete)',
  'GC orphan: dependent kept, owner reference removed',
  'GC foreground: owner waits for its blocking dependent',
  'GC background: dependent collected',
  'GC dangling owner: dependent collected',
  'namespace deletion empties and removes it',
  'kubectl debug: the ephemeral container runs',
  'in-place resize: the node reports the new resources',
] as const;

const CHECKS: readonly Check[] = [
  {
    name: CHECK_NAMES[0],
    run: async (c) => {
      await until('ServiceAccount default and ConfigMap kube-root-ca.crt', c.deadline, async () => {
        if (!(await c.k.exists(['serviceaccount', 'default', '-n', c.ns])))
          return 'no ServiceAccount default';
        const root = await c.k
          .json<Obj>(['get', 'configmap', 'kube-root-ca.crt', '-n', c.ns])
          .catch(() => undefined);
        return root?.data?.['ca.crt']?.includes('BEGIN CERTIFICATE') === true
          ? true
          : 'no kube-root-ca.crt with ca.crt';
      });
    },
  },
  {
    name: CHECK_NAMES[1],
    run: async (c) => {
      await c.k.run(['create', 'deployment', 'web', `--image=${IMAGE}`, '--replicas=2', '-n', c.ns]);
      await rollout(c, 'deployment/web');
      await c.k.run(['set', 'image', 'deployment/web', 'pause=registry.k8s.io/pause:3.9', '-n', c.ns]);
      await rollout(c, 'deployment/web');
      await c.k.run(['rollout', 'undo', 'deployment/web', '-n', c.ns]);
      await rollout(c, 'deployment/web');
      const d = await c.k.json<Obj>(['get', 'deployment', 'web', '-n', c.ns]);
      const image = (d.spec?.['template'] as { spec: { containers: { image: string }[] } }).spec.containers[0]
        ?.image;
      const revision = d.metadata.annotations?.['deployment.kubernetes.io/revision'];
      if (image !== IMAGE || revision !== '3')
        throw new Error(`after undo: image ${image}, revision ${revision}`);
      await c.k.run(['scale', 'deployment/web', '--replicas=4', '-n', c.ns]);
      await rollout(c, 'deployment/web');
      const ready = (await c.k.json<Obj>(['get', 'deployment', 'web', '-n', c.ns])).status?.['readyReplicas'];
      if (ready !== 4) throw new Error(`after scale to 4: readyReplicas ${String(ready)}`);
    },
  },
  {
    name: CHECK_NAMES[2],
    run: async (c) => {
      await c.k.run(['create', 'deployment', 'ep', `--image=${IMAGE}`, '--replicas=2', '-n', c.ns]);
      await rollout(c, 'deployment/ep');
      await c.k.run(['expose', 'deployment', 'ep', '--port=80', '-n', c.ns]);
      await until('EndpointSlice addresses = ready pod IPs', c.deadline, async () => {
        type PodView = { status?: { podIP?: string; conditions?: { type: string; status: string }[] } };
        const pods = await c.k.json<List<Obj & PodView>>(['get', 'pods', '-l', `${LABEL}=ep`, '-n', c.ns]);
        const ready = pods.items
          .filter(
            (p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true,
          )
          .map((p) => p.status?.podIP ?? '?')
          .sort();
        type Slice = { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] };
        const slices = await c.k.json<List<Slice>>([
          'get',
          'endpointslices',
          '-l',
          'kubernetes.io/service-name=ep',
          '-n',
          c.ns,
        ]);
        const listed = slices.items
          .flatMap((s) => s.endpoints ?? [])
          .filter((e) => e.conditions?.ready === true)
          .flatMap((e) => e.addresses)
          .sort();
        const want = ready.join(',');
        return ready.length === 2 && listed.join(',') === want
          ? true
          : `ready pods [${want}], slices [${listed.join(',')}]`;
      });
    },
  },
  {
    name: CHECK_NAMES[3],
    run: async (c) => {
      const labels = { [LABEL]: 'db' };
      await c.k.create(
        withKind('v1', 'Service', {
          metadata: { name: 'db', namespace: c.ns },
          spec: { clusterIP: 'None', selector: labels, ports: [{ port: 80 }] },
        }),
        withKind('apps/v1', 'StatefulSet', {
          metadata: { name: 'db', namespace: c.ns },
          spec: {
            serviceName: 'db',
            replicas: 2,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: podSpec() },
          },
        }),
      );
      await rollout(c, 'statefulset/db');
      for (const pod of ['db-0', 'db-1'])
        if (!(await c.k.exists(['pod', pod, '-n', c.ns]))) throw new Error(`no pod ${pod}`);
    },
  },
  {
    name: CHECK_NAMES[4],
    run: async (c) => {
      const labels = { [LABEL]: 'ds' };
      await c.k.create(
        withKind('apps/v1', 'DaemonSet', {
          metadata: { name: 'ds', namespace: c.ns },
          spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec() } },
        }),
      );
      await rollout(c, 'daemonset/ds');
      const s = (await c.k.json<Obj>(['get', 'daemonset', 'ds', '-n', c.ns])).status ?? {};
      if (s['desiredNumberScheduled'] !== 3 || s['numberReady'] !== 3)
        throw new Error(`desired ${String(s['desiredNumberScheduled'])}, ready ${String(s['numberReady'])}`);
    },
  },
  {
    name: CHECK_NAMES[5],
    run: async (c) => {
      await c.k.create(
        withKind('batch/v1', 'Job', {
          metadata: { name: 'job', namespace: c.ns },
          spec: {
            completions: 2,
            parallelism: 2,
            template: {
              // The simulated node ends the containers 1 s after they start, with exit code 0.
              metadata: { annotations: { 'sim.capstan.dev/complete-after': '1s' } },
              spec: podSpec({ restartPolicy: 'Never' }),
            },
          },
        }),
      );
      await c.k.run(['wait', '--for=condition=complete', 'job/job', '-n', c.ns, c.timeout()]);
    },
  },
  {
    name: CHECK_NAMES[6],
    run: async (c) => {
      const owner = await c.k.createOne(cm(c.ns, 'owner'));
      await c.k.create(cm(c.ns, 'dependent', ownedBy(owner)));
      await c.k.run(['delete', 'configmap', 'owner', '--cascade=orphan', '-n', c.ns, c.timeout()]);
      await until('the dependent without owner references', c.deadline, async () => {
        const d = await c.k.json<Obj>(['get', 'configmap', 'dependent', '-n', c.ns]);
        return (d.metadata.ownerReferences ?? []).length === 0 ? true : 'still has its owner reference';
      });
      // Kept: still there a moment later.
      await sleep(2000);
      if (!(await c.k.exists(['configmap', 'dependent', '-n', c.ns])))
        throw new Error('the orphan was deleted');
    },
  },
  {
    name: CHECK_NAMES[7],
    run: async (c) => {
      const owner = await c.k.createOne(cm(c.ns, 'owner'));
      await c.k.create(cm(c.ns, 'dependent', { ...ownedBy(owner, true), finalizers: [HOLD] }));
      await c.k.run(['delete', 'configmap', 'owner', '--cascade=foreground', '--wait=false', '-n', c.ns]);
      await until(
        'the dependent deleted while the owner waits (foregroundDeletion)',
        c.deadline,
        async () => {
          const o = await c.k.json<Obj>(['get', 'configmap', 'owner', '-n', c.ns]);
          const d = await c.k.json<Obj>(['get', 'configmap', 'dependent', '-n', c.ns]);
          const waiting = o.metadata.finalizers?.includes('foregroundDeletion') === true;
          return waiting && d.metadata.deletionTimestamp !== undefined
            ? true
            : `owner finalizers ${JSON.stringify(o.metadata.finalizers ?? [])}, dependent deleting ${d.metadata.deletionTimestamp !== undefined}`;
        },
      );
      await c.k.run([
        'patch',
        'configmap',
        'dependent',
        '-n',
        c.ns,
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ]);
      await until('owner and dependent gone', c.deadline, async () =>
        (await c.k.exists(['configmap', 'owner', '-n', c.ns])) ||
        (await c.k.exists(['configmap', 'dependent', '-n', c.ns]))
          ? 'still there'
          : true,
      );
    },
  },
  {
    name: CHECK_NAMES[8],
    run: async (c) => {
      const owner = await c.k.createOne(cm(c.ns, 'owner'));
      await c.k.create(cm(c.ns, 'dependent', ownedBy(owner)));
      await c.k.run(['delete', 'configmap', 'owner', '--cascade=background', '-n', c.ns, c.timeout()]);
      await until('the dependent collected', c.deadline, async () =>
        (await c.k.exists(['configmap', 'dependent', '-n', c.ns])) ? 'dependent still there' : true,
      );
    },
  },
  {
    name: CHECK_NAMES[9],
    run: async (c) => {
      const ghost = { metadata: { name: 'ghost', uid: randomUUID() } };
      await c.k.create(cm(c.ns, 'dependent', ownedBy(ghost)));
      await until('the dependent of a missing owner collected', c.deadline, async () =>
        (await c.k.exists(['configmap', 'dependent', '-n', c.ns])) ? 'dependent still there' : true,
      );
    },
  },
  {
    name: CHECK_NAMES[10],
    run: async (c) => {
      await c.k.create(cm(c.ns, 'data'));
      await c.k.run(['create', 'deployment', 'web', `--image=${IMAGE}`, '--replicas=2', '-n', c.ns]);
      await rollout(c, 'deployment/web');
      await c.k.run(['delete', 'namespace', c.ns, c.timeout()]);
      if (await c.k.exists(['namespace', c.ns])) throw new Error('the namespace is still there');
    },
  },
  {
    name: CHECK_NAMES[11],
    run: async (c) => {
      await c.k.create(
        withKind('v1', 'Pod', { metadata: { name: 'debugged', namespace: c.ns }, spec: podSpec() }),
      );
      await c.k.run([
        'wait',
        '--for=jsonpath={.status.phase}=Running',
        'pod/debugged',
        '-n',
        c.ns,
        c.timeout(),
      ]);
      // Through pods/ephemeralcontainers on the server; the node reports the container.
      await c.k.run(['debug', 'debugged', '-n', c.ns, `--image=${IMAGE}`, '-c', 'dbg', '--attach=false']);
      await until('the debug container running', c.deadline, async () => {
        const pod = await c.k.json<Obj>(['get', 'pod', 'debugged', '-n', c.ns]);
        const statuses = pod.status?.['ephemeralContainerStatuses'] as
          { name?: string; state?: { running?: unknown } }[] | undefined;
        const dbg = statuses?.find((s) => s.name === 'dbg');
        return dbg?.state?.running !== undefined
          ? true
          : `ephemeralContainerStatuses ${JSON.stringify(statuses)}`;
      });
    },
  },
  {
    name: CHECK_NAMES[12],
    run: async (c) => {
      const resources = { requests: { cpu: '100m' }, limits: { cpu: '200m' } };
      await c.k.create(
        withKind('v1', 'Pod', {
          metadata: { name: 'resized', namespace: c.ns },
          spec: podSpec({ containers: [{ name: 'main', image: IMAGE, resources }] }),
        }),
      );
      const cpuLimit = async (): Promise<unknown> => {
        const pod = await c.k.json<Obj>(['get', 'pod', 'resized', '-n', c.ns]);
        const statuses = pod.status?.['containerStatuses'] as
          { resources?: { limits?: Record<string, string> } }[] | undefined;
        return statuses?.[0]?.resources?.limits?.['cpu'];
      };
      // The server accepts a resize only once the node reports the running container's resources.
      await until('the running container reporting its resources', c.deadline, async () =>
        (await cpuLimit()) === '200m' ? true : `status cpu limit ${JSON.stringify(await cpuLimit())}`,
      );
      const patch = { spec: { containers: [{ name: 'main', resources: { limits: { cpu: '300m' } } }] } };
      await c.k.run([
        'patch',
        'pod',
        'resized',
        '-n',
        c.ns,
        '--subresource=resize',
        '-p',
        JSON.stringify(patch),
      ]);
      await until('the new cpu limit in the status', c.deadline, async () =>
        (await cpuLimit()) === '300m' ? true : `status cpu limit ${JSON.stringify(await cpuLimit())}`,
      );
    },
  },
];

/** Runs every check at once, each in its own fresh namespace; outcomes by check name. */
async function runChecks(k: Kubectl, prefix: string, timeoutMs: number): Promise<Map<string, Outcome>> {
  const outcomes = await Promise.all(
    CHECKS.map(async (check, i): Promise<[string, Outcome]> => {
      const started = Date.now();
      const deadline = started + timeoutMs;
      const ns = `${prefix}-${i}`;
      const ctx: CheckContext = {
        k,
        ns,
        deadline,
        timeout: () => `--timeout=${Math.max(1, Math.ceil((deadline - Date.now()) / 1000))}s`,
      };
      try {
        await k.run(['create', 'namespace', ns]);
        // Pods need the namespace's ServiceAccount (kube's admission refuses them before it exists).
        if (i !== 0)
          await until(`ServiceAccount default in ${ns}`, deadline, async () =>
            (await k.exists(['serviceaccount', 'default', '-n', ns])) ? true : 'not yet',
          );
        await check.run(ctx);
        return [check.name, { pass: true, detail: '', seconds: (Date.now() - started) / 1000 }];
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        return [check.name, { pass: false, detail, seconds: (Date.now() - started) / 1000 }];
      }
    }),
  );
  return new Map(outcomes);
}

// ---------------------------------------------------------------------------------------------
// The two directions

const SIMULATED_NODES = 3;
/** Simulated node names (`capstan agent --node-name-prefix`). */
const NODE_PREFIX = 'mm-node-';
const CLUSTER_CIDR = '10.244.0.0/16';
const IDS = {
  controllerManager: { user: 'system:kube-controller-manager', groups: [] },
  scheduler: { user: 'system:kube-scheduler', groups: [] },
  nodes: { user: 'capstan-simulated-nodes', groups: [] },
} satisfies Record<string, TokenIdentity>;

/** What starting a direction needs. */
interface DirectionEnv {
  readonly binDir: string;
  readonly kubectl: string;
  /** The direction's temporary directory (keys, kubeconfigs, data). */
  readonly dir: string;
  readonly children: Children;
  readonly progress: (line: string) => void;
}

/** A started direction: the administrator's kubectl and what runs. */
interface Started {
  readonly admin: Kubectl;
  readonly components: string[];
}

function kubeconfigOf(creds: Credentials, id: TokenIdentity): string {
  const path = creds.kubeconfigs.get(id.user);
  if (path === undefined) throw new Error(`no kubeconfig for ${id.user}`);
  return path;
}

/** The simulated nodes' agent: bound to kube's `system:node` ClusterRole, then started. */
async function startNodes(admin: Kubectl, children: Children, creds: Credentials): Promise<Child> {
  await admin.run([
    'create',
    'clusterrolebinding',
    'mix-and-match-nodes',
    '--clusterrole=system:node',
    `--user=${IDS.nodes.user}`,
  ]);
  return children.spawn('capstan agent', process.execPath, [
    capstanEntry(),
    'agent',
    '--simulate',
    `--kubeconfig=${kubeconfigOf(creds, IDS.nodes)}`,
    `--nodes=${SIMULATED_NODES}`,
    `--node-name-prefix=${NODE_PREFIX}`,
  ]);
}

/** (a): etcd + kube-apiserver; Capstan's controller manager, scheduler and simulated nodes. */
async function startA(env: DirectionEnv): Promise<Started> {
  const { binDir, dir, children, progress } = env;
  const api = await startKubeApiServer({ binDir, dir, children, progress, identities: Object.values(IDS) });
  api.client.close();
  const creds = api.credentials;
  const admin = new Kubectl(env.kubectl, creds.kubeconfig);
  progress('a: starting capstan controller-manager, capstan scheduler, capstan agent --simulate');
  const cmArgs = [
    capstanEntry(),
    'controller-manager',
    `--kubeconfig=${kubeconfigOf(creds, IDS.controllerManager)}`,
    '--controllers=*',
    '--use-service-account-credentials',
    '--leader-elect=false',
    '--secure-port=0',
    '--allocate-node-cidrs',
    `--cluster-cidr=${CLUSTER_CIDR}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    `--service-account-private-key-file=${creds.saKey}`,
    `--root-ca-file=${creds.caCrt}`,
    `--cluster-signing-cert-file=${creds.caCrt}`,
    `--cluster-signing-key-file=${creds.caKey}`,
  ];
  children.spawn('capstan controller-manager', process.execPath, cmArgs);
  const schedArgs = [
    capstanEntry(),
    'scheduler',
    `--kubeconfig=${kubeconfigOf(creds, IDS.scheduler)}`,
    '--leader-elect=false',
    '--secure-port=0',
  ];
  children.spawn('capstan scheduler', process.execPath, schedArgs);
  await startNodes(admin, children, creds);
  return {
    admin,
    components: [
      `etcd, kube-apiserver from ${binDir}`,
      `capstan ${cmArgs.slice(1).join(' ')}`,
      `capstan ${schedArgs.slice(1).join(' ')}`,
      `capstan agent --simulate --nodes=${SIMULATED_NODES} (identity ${IDS.nodes.user}, ClusterRole system:node)`,
    ],
  };
}

/** (b): a bare `capstan server`; kube-controller-manager, kube-scheduler, Capstan's simulated nodes. */
async function startB(env: DirectionEnv): Promise<Started> {
  const { binDir, dir, children, progress } = env;
  for (const b of ['kube-controller-manager', 'kube-scheduler'])
    if (!existsSync(join(binDir, b))) throw new Error(`no ${b} in --kube-bin-dir ${binDir}`);
  const port = await freePort();
  const creds = await writeCredentials(dir, `https://127.0.0.1:${port}`, Object.values(IDS));
  progress('b: starting capstan server --controllers=');
  const serverArgs = [
    capstanEntry(),
    'server',
    '--controllers=',
    `--data-dir=${join(dir, 'capstan')}`,
    `--cert-dir=${join(dir, 'capstan', 'pki')}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--token-auth-file=${creds.tokenFile}`,
    `--service-account-key-file=${creds.saKey}`,
    `--service-account-signing-key-file=${creds.saKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ];
  const server = children.spawn('capstan server', process.execPath, serverArgs);
  const client = new BenchClient(readKubeconfigCredentials(creds.kubeconfig), 1);
  try {
    await waitFor(
      server,
      'capstan server',
      async () => (await client.request('GET', '/readyz')).status === 200,
    );
  } finally {
    client.close();
  }
  const admin = new Kubectl(env.kubectl, creds.kubeconfig);
  progress('b: starting kube-controller-manager, kube-scheduler, capstan agent --simulate');
  // kube's client defaults: kube-controller-manager 20/30, kube-scheduler 50/100.
  const kcmArgs = kubeControllerManagerArgs(kubeconfigOf(creds, IDS.controllerManager), creds, CLUSTER_CIDR, {
    qps: 20,
    burst: 30,
  });
  children.spawn('kube-controller-manager', join(binDir, 'kube-controller-manager'), kcmArgs);
  const scheduler = await spawnScheduler(
    { kind: 'binary', binary: join(binDir, 'kube-scheduler') },
    { kubeconfig: kubeconfigOf(creds, IDS.scheduler), qps: 50, burst: 100, dir },
  );
  children.adopt('kube-scheduler', scheduler.pid, scheduler.exited, () => scheduler.stop());
  await startNodes(admin, children, creds);
  return {
    admin,
    components: [
      `capstan ${serverArgs.slice(1).join(' ')}`,
      `kube-controller-manager ${kcmArgs.join(' ')}`,
      `kube-scheduler --config (kubeconfig ${IDS.scheduler.user}, qps 50, burst 100, no leader election)`,
      `capstan agent --simulate --nodes=${SIMULATED_NODES} (identity ${IDS.nodes.user}, ClusterRole system:node)`,
    ],
  };
}

/**
 * Waits for the simulated nodes to be Ready and schedulable: no NoSchedule taint left (the node
 * lifecycle controller lifts `not-ready` once it sees Ready; a DaemonSet made before that counts
 * the node out).
 */
async function nodesReady(admin: Kubectl, deadline: number): Promise<void> {
  await until(`${SIMULATED_NODES} Ready nodes without NoSchedule taints`, deadline, async () => {
    type NodeView = {
      spec?: { taints?: { key: string; effect: string }[] };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const nodes = await admin.json<List<Obj & NodeView>>(['get', 'nodes']);
    const ready = nodes.items.filter(
      (n) =>
        n.metadata.name.startsWith(NODE_PREFIX) &&
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
        !(n.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule'),
    );
    return ready.length === SIMULATED_NODES ? true : `${ready.length} Ready and schedulable`;
  });
}

async function runDirection(id: DirectionId, args: MixArgs, logRoot: string): Promise<Map<string, Outcome>> {
  const dir = await mkdtemp(join(tmpdir(), `capstan-mix-${id}-`));
  const logDir = join(logRoot, id);
  await mkdir(logDir, { recursive: true });
  const children = new Children({ logDir });
  children.addCleanup(() => rm(dir, { recursive: true, force: true }));
  const progress = (line: string): void => console.error(`[${new Date().toISOString()}] ${line}`);
  const timeoutMs = args.timeoutSeconds * 1000;
  let stopping = false;
  try {
    const env = { binDir: args.kubeBinDir, kubectl: args.kubectl, dir, children, progress };
    const started = await (id === 'a' ? startA : startB)(env);
    for (const line of started.components) progress(`${id}: ${line}`);
    // A component that dies during the checks is named in the log, not only through failed checks.
    for (const c of children.running())
      void c.exited.then((why) => {
        if (!stopping) progress(`${id}: ${why}`);
      });
    await nodesReady(started.admin, Date.now() + timeoutMs);
    progress(`${id}: nodes Ready and schedulable; running ${CHECKS.length} checks`);
    return await runChecks(started.admin, `mix-${id}`, timeoutMs);
  } catch (err) {
    const detail = `start-up failed: ${err instanceof Error ? err.message : String(err)}`;
    progress(`${id}: ${detail}`);
    return new Map(CHECK_NAMES.map((c) => [c, { pass: false, detail, seconds: 0 }]));
  } finally {
    stopping = true;
    progress(`${id}: stopping (logs in ${logDir})`);
    await children.stopAll();
  }
}

async function versionLine(file: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await execFileP(file, [...args]);
    return stdout.trim().split('\n')[0] ?? '';
  } catch (err) {
    return `unknown (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function main(): Promise<void> {
  const args = parseMixArgs(process.argv.slice(2));
  if (!existsSync(args.kubectl)) throw new Error(`no kubectl at ${args.kubectl}`);
  const logRoot = args.logDir ?? (await mkdtemp(join(tmpdir(), 'capstan-mix-logs-')));
  const results = new Map<DirectionId, Map<string, Outcome>>();
  const started = new Date();
  for (const id of args.directions) results.set(id, await runDirection(id, args, logRoot));
  const bin = (b: string): string => join(args.kubeBinDir, b);
  const versions = [
    `capstan ${packageVersion()}`,
    `kube-apiserver: ${await versionLine(bin('kube-apiserver'), ['--version'])}`,
    `etcd: ${await versionLine(bin('etcd'), ['--version'])}`,
    `kubectl: ${await versionLine(args.kubectl, ['version', '--client'])}`,
  ];
  console.log(
    `mix and match, ${started.toISOString()}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`versions: ${versions.join('; ')}`);
  console.log(`logs: ${logRoot}`);
  console.log('');
  console.log(renderTable(CHECK_NAMES, results));
  process.exitCode = allPassed(CHECK_NAMES, results) ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((err: unknown) => {
    console.error(`mix-and-match: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  });
