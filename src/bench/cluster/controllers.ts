/**
 * Issue 29's benchmark: controller managers side by side on one Capstan server. The server runs
 * bare (`--controllers=`: no in-process controller or scheduler, so pods stay unscheduled and
 * nothing but the manager under test writes); each manager runs as its own process with the same
 * client QPS and burst, the other one stopped: `capstan controller-manager` (A) and, with
 * `--kube-bin-dir`, kube-controller-manager (B). Per manager, in a fresh namespace: a Deployment
 * created at 0 replicas (and seen synced, so the manager is warm), scaled to R; the figures are
 * pods created per second (scale until a list counts R pods, polled every 100 ms), the manager's RSS holding the R pods and
 * its CPU seconds, then a foreground delete of the Deployment until its last pod is gone.
 */
import { join } from 'node:path';
import { packageVersion } from '../../server/package-version.js';
import type { BenchClient } from '../client.js';
import type { Row } from '../report.js';
import { capstanEntry } from '../scheduler/process.js';
import { ProcSampler } from '../proc.js';
import { ratePerSecond } from '../stats.js';
import type { Children } from './children.js';
import { DEPLOYMENT, deploymentBody } from './objects.js';
import type { ClientSettings } from './stack.js';
import { podCount } from './watch.js';

/** A controller manager under test. */
export interface ManagerKind {
  readonly label: string;
  /** The command line, given the kubeconfig. */
  readonly command: (kubeconfig: string) => { file: string; args: string[] };
}

/** What both managers are given. */
function commonFlags(kubeconfig: string, client: ClientSettings): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--controllers=*',
    `--kube-api-qps=${client.qps}`,
    `--kube-api-burst=${client.burst}`,
  ];
}

/** `capstan controller-manager` of this build. */
export function capstanManager(client: ClientSettings): ManagerKind {
  return {
    label: `capstan controller-manager v${packageVersion()}`,
    command: (kubeconfig) => ({
      file: process.execPath,
      args: [capstanEntry(), 'controller-manager', ...commonFlags(kubeconfig, client)],
    }),
  };
}

/** kube-controller-manager from `binDir`. */
export function kubeManager(binDir: string, client: ClientSettings): ManagerKind {
  return {
    label: 'kube-controller-manager v1.33',
    command: (kubeconfig) => ({
      file: join(binDir, 'kube-controller-manager'),
      args: commonFlags(kubeconfig, client),
    }),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** After the last pod, how long the manager is left to settle before its RSS is read. */
const SETTLE_MS = 2000;

interface DeploymentView {
  status?: { observedGeneration?: number; conditions?: unknown[] };
}

/** Settings of one manager's run. */
export interface ManagerRun {
  readonly client: BenchClient;
  readonly kubeconfig: string;
  readonly children: Children;
  readonly manager: ManagerKind;
  readonly replicas: number;
  /** A namespace no earlier run used. */
  readonly namespace: string;
  readonly timeoutMs: number;
}

/**
 * Polls `check` every 100 ms until it holds.
 * @throws Error when it does not hold within `timeoutMs`, or `lost`'s reason (a manager that exited).
 */
export async function until(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  lost: Promise<never> = new Promise<never>(() => undefined),
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await Promise.race([check(), lost]))) {
    if (Date.now() > end) throw new Error(`${what}: not done after ${timeoutMs / 1000} s`);
    await Promise.race([sleep(100), lost]);
  }
}

/**
 * Runs one manager: starts it, measures, stops it.
 * @throws Error when the manager exits or a step times out (the manager is stopped first).
 */
export async function measureManager(run: ManagerRun, progress: (line: string) => void): Promise<Row> {
  const { client, namespace: ns, replicas: r } = run;
  const { file, args } = run.manager.command(run.kubeconfig);
  const child = run.children.spawn(run.manager.label, file, args);
  const lost = child.exited.then((why) => {
    throw new Error(why);
  });
  lost.catch(() => undefined);
  try {
    await client.expect('POST', '/api/v1/namespaces', 201, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      contentType: 'application/json',
      discardBody: true,
    });
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await client.expect('POST', base, 201, {
      body: deploymentBody(0),
      contentType: 'application/json',
      discardBody: true,
    });
    // Warm: the manager made the namespace's ServiceAccount and synced the Deployment.
    await until(
      'the manager syncing a Deployment',
      run.timeoutMs,
      async () => {
        const sa = await client.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`);
        const d = JSON.parse(
          (await client.expect('GET', `${base}/${DEPLOYMENT}`, 200)).body.toString('utf8'),
        ) as DeploymentView;
        return (
          sa.status === 200 &&
          (d.status?.observedGeneration ?? 0) >= 1 &&
          (d.status?.conditions ?? []).length > 0
        );
      },
      lost,
    );
    progress(`  ${run.manager.label}: scaling ${ns}/${DEPLOYMENT} 0 → ${r}`);
    const sampler = new ProcSampler(child.pid, 250);
    const scaled = process.hrtime.bigint();
    await client.expect('PATCH', `${base}/${DEPLOYMENT}/scale`, 200, {
      body: JSON.stringify({ spec: { replicas: r } }),
      contentType: 'application/merge-patch+json',
      discardBody: true,
    });
    let firstAt: bigint | undefined;
    await until(
      `scale to ${r}`,
      run.timeoutMs,
      async () => {
        const count = await podCount(client, ns);
        if (count > 0) firstAt ??= process.hrtime.bigint();
        return count >= r;
      },
      lost,
    );
    const lastAt = process.hrtime.bigint();
    const createMs = Number(lastAt - scaled) / 1e6;
    await sleep(SETTLE_MS);
    const proc = sampler.stop();
    progress(`  ${run.manager.label}: foreground delete`);
    const deleted = process.hrtime.bigint();
    await client.expect('DELETE', `${base}/${DEPLOYMENT}`, [200, 202], {
      body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' }),
      contentType: 'application/json',
      discardBody: true,
    });
    await until(
      'foreground delete',
      run.timeoutMs,
      async () =>
        (await client.request('GET', `${base}/${DEPLOYMENT}`)).status === 404 &&
        (await podCount(client, ns)) === 0,
      lost,
    );
    const deleteS = Number(process.hrtime.bigint() - deleted) / 1e9;
    const figures: Record<string, number> = {
      'pods/s': ratePerSecond(r, createMs),
      'first pod ms': Number((firstAt ?? lastAt) - scaled) / 1e6,
      'last pod s': createMs / 1000,
    };
    if (proc !== undefined) {
      figures['manager RSS MiB'] = proc.rssEndBytes / (1024 * 1024);
      figures['manager peak RSS MiB'] = proc.rssPeakBytes / (1024 * 1024);
      figures['manager CPU s'] = proc.cpuMs / 1000;
    }
    figures['foreground delete s'] = deleteS;
    return {
      scenario: 'controllers',
      case: `Deployment 0 → ${r.toLocaleString('en-US')} replicas`,
      subject: run.manager.label,
      figures,
    };
  } finally {
    await child.stop();
  }
}
