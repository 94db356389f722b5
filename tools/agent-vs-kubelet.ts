/**
 * Issue 32's real-container checks through kubectl, run against `capstan agent` and against
 * kubelet v1.33 (a reference build, never part of the repository) on one containerd and one
 * `capstan server`, one node agent after the other, with a side-by-side table at the end. The
 * environment and the clean-up are tools/node-agents.ts's (as for tools/bench-agent.ts).
 *
 * The node IP is an address of a bridge of its own the tool makes (and removes), so the server reaches
 * each agent's API (logs, exec, attach, port-forward) without leaving the machine. The checks,
 * per agent, in order (the stream ones with kubectl 1.27, SPDY, and 1.33, WebSocket):
 * `run` (to Ready), `logs -f`, `exec -i` (stdin, stdout, stderr, exit status), `attach -i`,
 * `port-forward`, `cp` both ways; a liveness probe restarting a container twice, with the
 * back-off between the restarts; readiness gating a Service's EndpointSlice; an init container
 * and a sidecar; the projected service-account token read in the pod and used against the API
 * (`kubectl auth whoami` with it answers `system:serviceaccount:<ns>:default`); a static pod and its mirror; the agent
 * restarted (SIGTERM, started again) with every pod's containers untouched; a container started
 * by `ctr` beside the agent still running at the end.
 *
 *   npm run build
 *   node dist/tools/agent-vs-kubelet.js [--kubelet /work/refbuild/bin/kubelet] [--only capstan|kubelet]
 *
 * Needs root, containerd, runc, the CNI plugins, busybox-static and kubectl 1.27 and 1.33
 * (`CAPSTAN_KUBECTL_DIR`, default /usr/lib/google-cloud-sdk/bin). Exits 1 when a check failed for
 * Capstan (kubelet's failures are reported, not judged).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { BUSYBOX_IMAGE } from '../src/cluster/dev-images.js';
import {
  arg,
  toolStart,
  hostState,
  removeAgentLeftovers,
  sleep,
  startAgent,
  waitNodeReady,
  withAgentEnv,
  type AgentEnv,
  type Kind,
  type NodeAgent,
} from './node-agents.js';

toolStart('usage: node dist/tools/agent-vs-kubelet.js [--kubelet PATH] [--only capstan|kubelet]');
const KUBELET = arg('kubelet', '/work/refbuild/bin/kubelet');
const ONLY = arg('only', '');
const KUBECTL_DIR = process.env['CAPSTAN_KUBECTL_DIR'] ?? '/usr/lib/google-cloud-sdk/bin';
const VERSIONS = ['1.27', '1.33'] as const;
type Version = (typeof VERSIONS)[number];
const TAG = `capvs${process.pid}`;
const BRIDGE = `cvb${process.pid}`.slice(0, 15);
const DUMMY = `cvd${process.pid}`.slice(0, 15);
const NODE_IP = '10.244.238.1';
const POD_CIDR = '10.244.239.0/24';
const SERVICE_RANGE = '10.0.0.0/24';
const CONTROLLERS = [
  'namespace-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'endpoints-controller',
  'endpointslice-controller',
];

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One node agent's run of the checks. */
class Checks {
  readonly kind: Kind;
  readonly node: string;
  readonly ns: string;
  readonly env: AgentEnv;
  readonly dir: string;
  readonly staticDir: string;
  agent: NodeAgent | undefined;

  constructor(kind: Kind, env: AgentEnv) {
    this.kind = kind;
    this.env = env;
    this.node = `${TAG}-${kind}`;
    this.ns = `vs-${kind}`;
    this.dir = join(env.dir, this.node);
    this.staticDir = join(this.dir, 'manifests');
  }

  kubectl(v: Version, args: readonly string[], input?: string, kubeconfig?: string): Promise<Result> {
    const cfg = kubeconfig ?? this.env.server.kubeconfigPath;
    return new Promise((resolve, reject) => {
      const child = execFile(
        join(KUBECTL_DIR, `kubectl.${v}`),
        [
          '--kubeconfig',
          cfg,
          '--cache-dir',
          join(this.env.dir, `kubectl-cache-${v}`),
          '-n',
          this.ns,
          ...args,
        ],
        { timeout: 120_000, maxBuffer: 16 << 20, env: { ...process.env, KUBECONFIG: '' } },
        (err, stdout, stderr) => {
          if (err !== null && typeof err.code !== 'number') reject(new Error(err.message));
          else resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  /** kubectl 1.33, throwing on a non-zero exit. */
  async k(...args: string[]): Promise<string> {
    const r = await this.kubectl('1.33', args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  async jsonpath(kind: string, name: string, path: string): Promise<string> {
    return this.k('get', kind, name, '-o', `jsonpath={${path}}`);
  }

  /** Polls `f` every 500 ms until it answers true, up to `ms`. */
  async until(what: string, ms: number, f: () => Promise<boolean>): Promise<number> {
    const t0 = Date.now();
    for (;;) {
      if (this.agent?.exited !== undefined) throw new Error(`${this.kind} exited: ${this.agent.exited}`);
      if (await f().catch(() => false)) return Date.now() - t0;
      if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms / 1000} s`);
      await sleep(500);
    }
  }

  /**
   * Runs kubectl with stdin open until its output matches `want` (writing `feed` every second
   * while it does not), then kills it.
   */
  stream(v: Version, args: readonly string[], want: RegExp, feed?: string, ms = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        join(KUBECTL_DIR, `kubectl.${v}`),
        [
          '--kubeconfig',
          this.env.server.kubeconfigPath,
          '--cache-dir',
          join(this.env.dir, `kubectl-cache-${v}`),
          '-n',
          this.ns,
          ...args,
        ],
        { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } },
      );
      let out = '';
      let err = '';
      const done = (e?: Error): void => {
        clearInterval(feeder);
        clearTimeout(timer);
        child.kill('SIGKILL');
        if (e) reject(e);
        else resolve(out);
      };
      const feeder = setInterval(() => {
        if (feed !== undefined && child.stdin.writable) child.stdin.write(feed);
      }, 1000);
      const timer = setTimeout(
        () => done(new Error(`no ${String(want)} within ${ms / 1000} s: ${(out + err).trim().slice(-300)}`)),
        ms,
      );
      child.stdin.on('error', () => undefined);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (want.test(out)) done();
      });
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.once('exit', (code) => {
        if (!want.test(out)) done(new Error(`kubectl exited ${code}: ${(out + err).trim().slice(-300)}`));
      });
    });
  }

  pod(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}): unknown {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: this.ns, labels },
      spec: { nodeName: this.node, terminationGracePeriodSeconds: 1, ...spec },
    };
  }

  async apply(...objects: unknown[]): Promise<void> {
    const r = await this.kubectl(
      '1.33',
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
    if (r.code !== 0) throw new Error(`kubectl apply: ${r.stderr.trim()}`);
  }

  async running(name: string, ms = 90_000): Promise<number> {
    return this.until(
      `${name} Running`,
      ms,
      async () => (await this.jsonpath('pod', name, '.status.phase')) === 'Running',
    );
  }
}

const c = (name: string, command: string, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  image: BUSYBOX_IMAGE,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', command],
  ...more,
});

/** A check: answers a short note when it passes, throws when it fails. */
type Check = readonly [name: string, run: (x: Checks) => Promise<string>];

const streamChecks = (v: Version): Check[] => [
  [
    `run (kubectl ${v})`,
    async (x) => {
      const overrides = JSON.stringify({
        apiVersion: 'v1',
        spec: { nodeName: x.node, terminationGracePeriodSeconds: 1 },
      });
      const name = `run-${v.replace('.', '-')}`;
      const r = await x.kubectl(v, [
        'run',
        name,
        `--image=${BUSYBOX_IMAGE}`,
        '--image-pull-policy=IfNotPresent',
        '--restart=Never',
        `--overrides=${overrides}`,
        '--command',
        '--',
        'sh',
        '-c',
        'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done',
      ]);
      if (r.code !== 0) throw new Error(r.stderr.trim());
      const t0 = Date.now();
      const w = await x.kubectl(v, ['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=90s']);
      if (w.code !== 0) throw new Error(w.stderr.trim());
      return `Ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    },
  ],
  [
    `logs -f (kubectl ${v})`,
    async (x) => {
      const out = await x.stream(v, ['logs', '-f', `run-${v.replace('.', '-')}`], /tick 2\n[^]*tick 3\n/);
      return `${out.split('\n').length - 1} lines streamed`;
    },
  ],
  [
    `exec -i (kubectl ${v})`,
    async (x) => {
      const r = await x.kubectl(
        v,
        ['exec', '-i', `run-${v.replace('.', '-')}`, '--', 'sh', '-c', 'cat; echo err >&2; exit 3'],
        'hello\n',
      );
      if (r.stdout !== 'hello\n' || !r.stderr.includes('err') || r.code !== 3)
        throw new Error(
          `exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`,
        );
      return 'stdin, stdout, stderr, exit 3';
    },
  ],
  [
    `attach -i (kubectl ${v})`,
    async (x) => {
      await x.stream(v, ['attach', '-i', 'attach'], /got ping/, 'ping\n');
      return 'stdin echoed';
    },
  ],
  [
    `port-forward (kubectl ${v})`,
    async (x) => {
      let got = '';
      // Hold a forward open and fetch through it.
      const child = spawn(
        join(KUBECTL_DIR, `kubectl.${v}`),
        [
          '--kubeconfig',
          x.env.server.kubeconfigPath,
          '--cache-dir',
          join(x.env.dir, `kubectl-cache-${v}`),
          '-n',
          x.ns,
          'port-forward',
          'pod/web',
          ':8080',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } },
      );
      try {
        const port = await new Promise<number>((resolve, reject) => {
          let out = '';
          const timer = setTimeout(() => reject(new Error(`no forward: ${out}`)), 30_000);
          child.stdout.on('data', (b: Buffer) => {
            out += b.toString();
            const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
            if (m) {
              clearTimeout(timer);
              resolve(Number(m[1]));
            }
          });
          child.stderr.on('data', (b: Buffer) => (out += b.toString()));
        });
        got = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      } finally {
        child.kill('SIGKILL');
      }
      if (got !== 'hello-pf\n') throw new Error(`fetched ${JSON.stringify(got)}`);
      return 'HTTP through the forward';
    },
  ],
  [
    `cp (kubectl ${v})`,
    async (x) => {
      const pod = `run-${v.replace('.', '-')}`;
      const local = join(x.dir, `cp-${v}.txt`);
      const back = join(x.dir, `cp-${v}-back.txt`);
      const text = `copied with kubectl ${v}\n`.repeat(100);
      await writeFile(local, text);
      const up = await x.kubectl(v, ['cp', local, `${x.ns}/${pod}:/tmp/f.txt`]);
      if (up.code !== 0) throw new Error(`to the pod: ${up.stderr.trim()}`);
      const down = await x.kubectl(v, ['cp', `${x.ns}/${pod}:/tmp/f.txt`, back]);
      if (down.code !== 0) throw new Error(`from the pod: ${down.stderr.trim()}`);
      if ((await readFile(back, 'utf8')) !== text) throw new Error('the copy differs');
      return `${text.length} bytes both ways`;
    },
  ],
];

const checks: Check[] = [
  ...VERSIONS.flatMap(streamChecks),
  [
    'liveness restart with back-off',
    async (x) => {
      await x.until(
        'restartCount 2',
        150_000,
        async () =>
          Number(await x.jsonpath('pod', 'live', '.status.containerStatuses[0].restartCount')) >= 2 &&
          (await x.jsonpath('pod', 'live', '.status.containerStatuses[0].state.running.startedAt')) !== '',
      );
      const st = JSON.parse(await x.jsonpath('pod', 'live', '.status.containerStatuses[0]')) as {
        restartCount: number;
        state: { running?: { startedAt: string } };
        lastState: { terminated?: { finishedAt: string; exitCode: number } };
      };
      const gap =
        (Date.parse(st.state.running?.startedAt ?? '') -
          Date.parse(st.lastState.terminated?.finishedAt ?? '')) /
        1000;
      const reasons = new Set(
        (
          await x.k(
            'get',
            'events',
            '--field-selector',
            'involvedObject.name=live',
            '-o',
            'jsonpath={.items[*].reason}',
          )
        ).split(' '),
      );
      for (const r of ['Unhealthy', 'Killing']) if (!reasons.has(r)) throw new Error(`no ${r} event`);
      return `restart ${st.restartCount} ${gap.toFixed(0)} s after exit ${st.lastState.terminated?.exitCode}; BackOff event ${reasons.has('BackOff') ? 'yes' : 'no'}`;
    },
  ],
  [
    'readiness gates endpoints',
    async (x) => {
      const ready = (): Promise<string> =>
        x.k(
          'get',
          'endpointslices',
          '-l',
          'kubernetes.io/service-name=ready',
          '-o',
          'jsonpath={.items[*].endpoints[*].conditions.ready}',
        );
      await x.running('ready');
      await x.until('a not-ready endpoint', 30_000, async () => (await ready()) === 'false');
      const addrs = await x.jsonpath('endpoints', 'ready', '.subsets[*].addresses[*].ip');
      if (addrs !== '') throw new Error(`a ready address before the probe passed: ${addrs}`);
      await x.k('exec', 'ready', '--', 'touch', '/tmp/ready');
      const ms = await x.until('a ready endpoint', 30_000, async () => (await ready()) === 'true');
      return `not ready, then ready ${(ms / 1000).toFixed(1)} s after the file`;
    },
  ],
  [
    'init container and sidecar',
    async (x) => {
      await x.running('init');
      let log = '';
      await x
        .until(
          'main log',
          30_000,
          async () => (log = await x.k('logs', 'init', '-c', 'main')) === 'init\nside\n',
        )
        .catch((err: Error) => {
          throw new Error(`${err.message}; main logged ${JSON.stringify(log)}`);
        });
      const init = await x.jsonpath(
        'pod',
        'init',
        '.status.initContainerStatuses[0].state.terminated.reason',
      );
      const side = await x.jsonpath('pod', 'init', '.status.initContainerStatuses[1].started');
      if (init !== 'Completed' || side !== 'true') throw new Error(`init ${init}, sidecar started ${side}`);
      return 'init Completed, sidecar started, main saw both';
    },
  ],
  [
    'projected token used against the API',
    async (x) => {
      const token = (
        await x.k('exec', 'run-1-33', '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/token')
      ).trim();
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
        'kubernetes.io'?: { pod?: { name?: string } };
        exp: number;
        iat: number;
      };
      const admin = parse(await readFile(x.env.server.kubeconfigPath, 'utf8')) as {
        users: { name: string; user: Record<string, unknown> }[];
      };
      for (const u of admin.users) u.user = { token };
      const cfg = join(x.dir, 'token.kubeconfig');
      await writeFile(cfg, stringify(admin));
      // Whom the API takes the token's bearer for (SelfSubjectReview).
      const r = await x.kubectl(
        '1.33',
        ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
        undefined,
        cfg,
      );
      const who = `system:serviceaccount:${x.ns}:default`;
      if (r.stdout !== who) throw new Error(`answered ${r.code}: ${r.stdout} ${r.stderr.trim()}`);
      if (claims['kubernetes.io']?.pod?.name !== 'run-1-33') throw new Error('token not bound to the pod');
      return `API knew ${who}; bound to the pod, ${((claims.exp - claims.iat) / 3600).toFixed(1)} h`;
    },
  ],
  [
    'static pod and mirror',
    async (x) => {
      const mirror = `static-${x.node}`;
      const ms = await x.running(mirror);
      const a = await x.jsonpath('pod', mirror, '.metadata.annotations.kubernetes\\.io/config\\.mirror');
      if (a === '') throw new Error('no kubernetes.io/config.mirror annotation');
      return `mirror Running (${(ms / 1000).toFixed(0)} s more)`;
    },
  ],
  [
    'agent restart, pods untouched',
    async (x) => {
      const pods = ['run-1-27', 'run-1-33', 'attach', 'web', 'init', 'ready', `static-${x.node}`];
      const ids = async (): Promise<string> => {
        const out: string[] = [];
        for (const p of pods)
          out.push(
            await x.jsonpath(
              'pod',
              p,
              '.status.containerStatuses[*].containerID}{.status.containerStatuses[*].restartCount',
            ),
          );
        return out.join('\n');
      };
      const before = await ids();
      await x.agent?.stop();
      x.agent = await startAgent(x.kind, x.env, x.dir, x.node, `/${x.node}`, {
        staticPodPath: x.staticDir,
        address: NODE_IP,
        anonymousAuth: true,
      });
      await waitNodeReady(x.env.client, x.agent);
      await sleep(15_000);
      const after = await ids();
      if (after !== before) throw new Error(`containers changed:\n${before}\n→\n${after}`);
      for (const p of pods)
        if ((await x.jsonpath('pod', p, '.status.phase')) !== 'Running') throw new Error(`${p} not Running`);
      return `${pods.length} pods: same container IDs and restart counts`;
    },
  ],
  [
    'foreign container untouched',
    async (x) => {
      const r = await x.env.ctrd.ctr('-n', 'k8s.io', 'task', 'ls');
      const line = r.split('\n').find((l) => l.startsWith(`foreign-${x.kind} `));
      if (!line?.includes('RUNNING')) throw new Error(`ctr task: ${line ?? 'gone'}`);
      return 'still RUNNING';
    },
  ],
];

async function runChecks(kind: Kind, env: AgentEnv): Promise<Map<string, string>> {
  const x = new Checks(kind, env);
  const results = new Map<string, string>();
  const before = hostState();
  await mkdir(x.staticDir, { recursive: true });
  await x.env.ctrd.ctr('-n', 'k8s.io', 'run', '-d', BUSYBOX_IMAGE, `foreign-${kind}`, 'sleep', '3600');
  x.agent = await startAgent(kind, env, x.dir, x.node, `/${x.node}`, {
    staticPodPath: x.staticDir,
    address: NODE_IP,
    anonymousAuth: true,
  });
  try {
    await waitNodeReady(env.client, x.agent);
    await x.k('create', 'namespace', x.ns);
    await x.until(
      'the default ServiceAccount',
      30_000,
      async () => (await x.k('get', 'sa', 'default')) !== '',
    );
    await writeFile(
      join(x.staticDir, 'static.yaml'),
      stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'static', namespace: x.ns },
        spec: { terminationGracePeriodSeconds: 1, containers: [c('c', 'exec sleep 3600')] },
      }),
    );
    await x.apply(
      x.pod('attach', { containers: [c('c', 'while read l; do echo got $l; done', { stdin: true })] }),
      x.pod('web', {
        containers: [c('c', 'mkdir -p /www; echo hello-pf > /www/index.html; exec httpd -f -p 8080 -h /www')],
      }),
      x.pod('live', {
        containers: [
          c('c', 'exec sleep 3600', {
            livenessProbe: {
              exec: { command: ['cat', '/tmp/healthy'] },
              periodSeconds: 1,
              failureThreshold: 1,
              timeoutSeconds: 10,
            },
          }),
        ],
      }),
      x.pod(
        'ready',
        {
          containers: [
            c('c', 'exec sleep 3600', {
              readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
            }),
          ],
        },
        { app: 'ready' },
      ),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'ready', namespace: x.ns },
        spec: { selector: { app: 'ready' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
      x.pod('init', {
        volumes: [{ name: 'w', emptyDir: {} }],
        initContainers: [
          c('init', 'echo init > /w/init', { volumeMounts: [{ name: 'w', mountPath: '/w' }] }),
          c('side', 'echo side > /w/side; exec sleep 3600', {
            restartPolicy: 'Always',
            volumeMounts: [{ name: 'w', mountPath: '/w' }],
          }),
        ],
        containers: [
          c('main', 'until [ -f /w/side ]; do sleep 0.2; done; cat /w/init /w/side; exec sleep 3600', {
            volumeMounts: [{ name: 'w', mountPath: '/w' }],
          }),
        ],
      }),
    );
    for (const p of ['attach', 'web']) await x.running(p);
    for (const [name, run] of checks) {
      const t0 = Date.now();
      try {
        const note = await run(x);
        results.set(name, `ok: ${note}`);
      } catch (err) {
        results.set(name, `FAIL: ${(err as Error).message.split('\n').slice(0, 3).join(' / ')}`);
      }
      console.error(`${kind}: ${name}: ${results.get(name)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    await x.k('delete', 'namespace', x.ns, '--wait=false');
    await sleep(5000);
  } finally {
    await x.agent.stop();
    await removeAgentLeftovers(env, x.agent, x.dir, `/${x.node}`, before);
  }
  return results;
}

async function main(): Promise<void> {
  for (const v of VERSIONS)
    if (!existsSync(join(KUBECTL_DIR, `kubectl.${v}`))) throw new Error(`no kubectl.${v} in ${KUBECTL_DIR}`);
  if (ONLY !== 'capstan' && !existsSync(KUBELET))
    throw new Error(`no kubelet at ${KUBELET} (--kubelet PATH)`);
  const dir = await mkdtemp(join(tmpdir(), `${TAG}-`));
  const ip = (...a: string[]): void => {
    const r = spawnSync('ip', a, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${a.join(' ')}: ${r.stderr.trim()}`);
  };
  ip('link', 'add', DUMMY, 'type', 'bridge');
  const results = new Map<Kind, Map<string, string>>();
  try {
    ip('addr', 'add', `${NODE_IP}/32`, 'dev', DUMMY);
    ip('link', 'set', DUMMY, 'up');
    const opts = {
      dir,
      kubelet: KUBELET,
      bridge: BRIDGE,
      podCIDR: POD_CIDR,
      serviceRange: SERVICE_RANGE,
      controllers: CONTROLLERS,
      // The node names do not resolve: the server dials the node IP.
      serverArgs: ['--kubelet-preferred-address-types=InternalIP'],
      nodeIP: NODE_IP,
    };
    await withAgentEnv(opts, async (env) => {
      const kinds: Kind[] = ONLY === '' ? ['capstan', 'kubelet'] : [ONLY as Kind];
      for (const kind of kinds) results.set(kind, await runChecks(kind, env));
    });
  } finally {
    ip('link', 'del', DUMMY);
  }
  const cell = (s: string | undefined): string => (s ?? '-').replace(/\|/g, '\\|');
  console.log('\n| check | capstan agent | kubelet v1.33 |\n| --- | --- | --- |');
  for (const [name] of checks)
    console.log(
      `| ${name} | ${cell(results.get('capstan')?.get(name))} | ${cell(results.get('kubelet')?.get(name))} |`,
    );
  console.log(
    `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const failed = [...(results.get('capstan')?.values() ?? [])].some((r) => r.startsWith('FAIL'));
  if (failed) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
