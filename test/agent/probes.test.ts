/**
 * Probes, lifecycle hooks and activeDeadlineSeconds on real containers: `capstan agent` against
 * an in-process Capstan (with the endpoints and EndpointSlice controllers), driven by kubectl
 * 1.33.
 *
 * - a failing liveness exec probe restarts its container (Unhealthy and Killing events, the
 *   restart count growing, CrashLoopBackOff) and its preStop hook runs before each kill;
 * - a readiness httpGet probe (by port name) gates `ready`, the Ready condition, the Service's
 *   Endpoints and EndpointSlice, both ways;
 * - a startup tcpSocket probe holds `started` until the port listens; one that never succeeds
 *   gets the container killed;
 * - an exec probe outliving its timeout fails (`command "sleep 3" timed out`);
 * - postStart hooks run after start; a failing one kills the container (FailedPostStartHook);
 * - httpGet hooks reach another pod (a busybox httpd CGI that logs what it is asked), the
 *   preStop one when the pod is deleted;
 * - activeDeadlineSeconds fails the pod with DeadlineExceeded.
 *
 * The pods use a bridge and subnet of their own (no pod CIDR is given to the agent).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import {
  BUSYBOX_IMAGE,
  requireContainerd,
  startContainerd,
  type Containerd,
  unmountUnder,
} from '../support/containerd.js';
import { kubectlOutput } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

const enabled = requireContainerd();
const NODE = 'probe-node-1';
/** busybox httpd on :8080 with a CGI `/cgi-bin/hook` that logs its query and User-Agent. */
const WEB_SCRIPT = [
  'mkdir -p /www/cgi-bin && echo home > /www/index.html',
  "echo '#!/bin/sh' > /www/cgi-bin/hook",
  `echo 'echo "hook $QUERY_STRING $HTTP_USER_AGENT" > /proc/1/fd/1' >> /www/cgi-bin/hook`,
  "echo 'echo Content-Type: text/plain; echo; echo ok' >> /www/cgi-bin/hook",
  'chmod +x /www/cgi-bin/hook',
  'exec httpd -f -p 8080 -h /www',
].join(' && ');

interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  involvedObject: { fieldPath?: string };
}

describe.runIf(enabled)('probes, hooks and deadlines with kubectl 1.33', () => {
  let ctrd: Containerd;
  let server: TestServer;
  let dir: string;
  let agent: Agent;
  const k = (...args: string[]): Promise<string> => kubectlOutput('1.33', args, server.kubeconfigPath);
  const jsonpath = (pod: string, path: string): Promise<string> =>
    k('get', 'pod', pod, '-o', `jsonpath={${path}}`);
  const events = async (pod: string): Promise<KubeEvent[]> =>
    (
      JSON.parse(
        await k('get', 'events', '--field-selector', `involvedObject.name=${pod}`, '-o', 'json'),
      ) as { items: KubeEvent[] }
    ).items;
  /** The pod's events as `type reason message` lines. */
  const eventLines = async (pod: string): Promise<string[]> =>
    (await events(pod)).map((e) => `${e.type} ${e.reason} ${e.message}`);
  const apply = async (name: string, obj: Record<string, unknown>): Promise<void> => {
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(obj));
    await k('apply', '-f', file);
  };
  const applyPod = (
    name: string,
    container: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    labels: Record<string, string> = {},
  ): Promise<void> =>
    apply(name, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: BUSYBOX_IMAGE, ...container }],
        ...extra,
      },
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-probes-'));
    ctrd = await startContainerd({ cni: { bridge: 'capprobe0', subnet: '10.244.237.0/24' } });
    server = await startTestServer({ controllers: ['endpoint', 'endpointslice'] });
    agent = new Agent(
      resolveConfig(
        agentFlagSet().parse([
          `--kubeconfig=${server.kubeconfigPath}`,
          `--hostname-override=${NODE}`,
          `--container-runtime-endpoint=${ctrd.endpoint}`,
          `--root-dir=${join(dir, 'root')}`,
          `--pod-logs-dir=${join(dir, 'logs')}`,
          `--cni-conf-dir=${ctrd.cniConfDir}`,
          `--cgroup-root=${ctrd.cgroupParent}`,
          '--address=127.0.0.1',
          '--port=0',
          '--healthz-port=0',
          '--node-ip=127.0.0.1',
        ]),
      ),
    );
    await agent.start();
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await server?.close();
    await ctrd?.stop();
    // Pods left running keep their volumes' tmpfs mounts.
    if (dir) await unmountUnder(dir);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('restarts a container failing its liveness probe, running its preStop hook first', async () => {
    await applyPod('live', {
      command: ['sh', '-c', 'echo started; touch /tmp/healthy; sleep 3; rm /tmp/healthy; exec sleep 600'],
      // A timeout well above the exec's time on a loaded machine: the failure the test reads is the
      // missing file's, not a probe that timed out (kube's default timeoutSeconds is 1).
      livenessProbe: {
        exec: { command: ['cat', '/tmp/healthy'] },
        periodSeconds: 1,
        failureThreshold: 2,
        timeoutSeconds: 10,
      },
      lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop-ran > /proc/1/fd/1'] } } },
    });
    await expect
      .poll(async () => Number(await jsonpath('live', '.status.containerStatuses[0].restartCount')), {
        timeout: 60_000,
        interval: 500,
      })
      .toBeGreaterThanOrEqual(1);
    const evs = await events('live');
    const unhealthy = evs.find((e) => e.reason === 'Unhealthy');
    expect(unhealthy).toMatchObject({
      type: 'Warning',
      message: "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n",
      involvedObject: { fieldPath: 'spec.containers{c}' },
    });
    expect(evs.filter((e) => e.reason === 'Killing').map((e) => [e.type, e.message])).toContainEqual([
      'Normal',
      'Container c failed liveness probe, will be restarted',
    ]);
    // The preStop hook wrote into the killed container's log before it stopped.
    await expect
      .poll(() => k('logs', 'live', '--previous'), { timeout: 10_000 })
      .toBe('started\nprestop-ran\n');
    // The second kill finds the back-off running (restartCount stays 1 meanwhile, as kube's).
    await expect
      .poll(() => jsonpath('live', '.status.containerStatuses[0].state.waiting.reason'), {
        timeout: 60_000,
        interval: 300,
      })
      .toBe('CrashLoopBackOff');
    expect(await jsonpath('live', '.status.containerStatuses[0].state.waiting.message')).toMatch(
      /^back-off 10s restarting failed container=c pod=live_default\(/,
    );
    expect(await jsonpath('live', '.status.containerStatuses[0].lastState.terminated.exitCode')).toBe('137');
    expect(await jsonpath('live', '.status.phase')).toBe('Running');
  }, 120_000);

  it('gates ready, the Ready condition, Endpoints and EndpointSlices on a readiness httpGet probe', async () => {
    await apply('svc', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await applyPod(
      'web',
      {
        command: ['sh', '-c', WEB_SCRIPT],
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
      },
      {},
      { app: 'web' },
    );
    await expect.poll(() => jsonpath('web', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    const ip = await jsonpath('web', '.status.podIP');
    expect(ip).toMatch(/^10\.244\.237\./);
    await expect
      .poll(() => k('get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].notReadyAddresses[0].ip}'), {
        timeout: 30_000,
      })
      .toBe(ip);
    expect(await jsonpath('web', '.status.containerStatuses[0].ready')).toBe('false');
    expect(await jsonpath('web', '.status.containerStatuses[0].started')).toBe('true');
    expect(await jsonpath('web', '.status.conditions[?(@.type=="Ready")].status')).toBe('False');
    await expect
      .poll(
        async () =>
          (await events('web')).some(
            (e) => e.message === 'Readiness probe failed: HTTP probe failed with statuscode: 404',
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);

    const id = (await jsonpath('web', '.status.containerStatuses[0].containerID')).replace(
      'containerd://',
      '',
    );
    await agent.cri.execSync(id, ['sh', '-c', 'echo yes > /www/ready'], 5);
    await expect
      .poll(() => jsonpath('web', '.status.containerStatuses[0].ready'), { timeout: 15_000 })
      .toBe('true');
    expect(await jsonpath('web', '.status.conditions[?(@.type=="Ready")].status')).toBe('True');
    expect(await jsonpath('web', '.status.conditions[?(@.type=="ContainersReady")].status')).toBe('True');
    await expect
      .poll(() => k('get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].addresses[0].ip}'), {
        timeout: 30_000,
      })
      .toBe(ip);
    await expect
      .poll(
        () =>
          k(
            'get',
            'endpointslices',
            '-l',
            'kubernetes.io/service-name=web',
            '-o',
            'jsonpath={.items[0].endpoints[0].addresses[0]}={.items[0].endpoints[0].conditions.ready}',
          ),
        { timeout: 30_000 },
      )
      .toBe(`${ip}=true`);

    await agent.cri.execSync(id, ['rm', '/www/ready'], 5);
    await expect
      .poll(() => jsonpath('web', '.status.containerStatuses[0].ready'), { timeout: 15_000 })
      .toBe('false');
    await expect
      .poll(() => k('get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].notReadyAddresses[0].ip}'), {
        timeout: 30_000,
      })
      .toBe(ip);
    expect(await jsonpath('web', '.status.containerStatuses[0].restartCount')).toBe('0');
  }, 120_000);

  it('runs httpGet postStart and preStop hooks (the preStop one on deletion)', async () => {
    const webIP = await jsonpath('web', '.status.podIP');
    const hook = (q: string) => ({ httpGet: { host: webIP, port: 8080, path: `/cgi-bin/hook?${q}` } });
    await applyPod('caller', {
      command: ['sleep', '600'],
      lifecycle: { postStart: hook('poststart'), preStop: hook('prestop') },
    });
    await expect.poll(() => jsonpath('caller', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    expect(await k('logs', 'web')).toContain('hook poststart kube-lifecycle/1.33\n');
    await k('delete', 'pod', 'caller', '--wait=false');
    await expect
      .poll(() => k('logs', 'web'), { timeout: 30_000 })
      .toContain('hook prestop kube-lifecycle/1.33\n');
    const evs = await events('caller');
    expect(evs.map((e) => e.reason)).not.toContain('FailedPreStopHook');
    expect(evs.map((e) => e.reason)).not.toContain('FailedPostStartHook');
  }, 90_000);

  it('holds started until a startup tcpSocket probe passes, and kills a container that never starts', async () => {
    await applyPod('slow', {
      // It listens only after the test has seen it running and not started, and says so (exec,
      // below): any fixed wait raced with a status that reached the test late on a loaded machine
      // (12 s was not enough in a CI run).
      command: ['sh', '-c', 'until [ -e /tmp/listen ]; do sleep 0.2; done; exec httpd -f -p 9000 -h /'],
      ports: [{ name: 'svc', containerPort: 9000 }],
      startupProbe: { tcpSocket: { port: 'svc' }, periodSeconds: 1, failureThreshold: 120 },
      readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 1 },
    });
    await applyPod('nostart', {
      command: ['sleep', '600'],
      startupProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 2 },
    });
    await expect
      .poll(() => jsonpath('slow', '.status.containerStatuses[0].state.running.startedAt'), {
        timeout: 60_000,
      })
      .not.toBe('');
    expect(await jsonpath('slow', '.status.containerStatuses[0].started')).toBe('false');
    expect(await jsonpath('slow', '.status.containerStatuses[0].ready')).toBe('false');
    await k('exec', 'slow', '--', 'touch', '/tmp/listen');
    await expect
      .poll(() => jsonpath('slow', '.status.containerStatuses[0].started'), { timeout: 30_000 })
      .toBe('true');
    await expect
      .poll(() => jsonpath('slow', '.status.containerStatuses[0].ready'), { timeout: 10_000 })
      .toBe('true');
    expect(await jsonpath('slow', '.status.containerStatuses[0].restartCount')).toBe('0');

    await expect
      .poll(async () => Number(await jsonpath('nostart', '.status.containerStatuses[0].restartCount')), {
        timeout: 60_000,
      })
      .toBeGreaterThanOrEqual(1);
    const evs = await events('nostart');
    expect(evs.map((e) => e.message)).toContain('Container c failed startup probe, will be restarted');
    expect(evs.find((e) => e.reason === 'Unhealthy')?.message).toMatch(
      /^Startup probe failed: dial tcp 10\.244\.237\.\d+:9999: connect: connection refused$/,
    );
  }, 120_000);

  it('runs postStart hooks, and kills the container when one fails', async () => {
    await applyPod('hooks', {
      command: ['sh', '-c', 'echo main; exec sleep 600'],
      readinessProbe: { exec: { command: ['sleep', '3'] }, timeoutSeconds: 1, periodSeconds: 2 },
      lifecycle: {
        postStart: { exec: { command: ['sh', '-c', 'sleep 0.5; echo poststart-ran > /proc/1/fd/1'] } },
      },
    });
    await applyPod('badhook', {
      command: ['sleep', '600'],
      lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo no >&2; exit 3'] } } },
    });
    await expect.poll(() => jsonpath('hooks', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    await expect.poll(() => k('logs', 'hooks'), { timeout: 10_000 }).toBe('main\npoststart-ran\n');
    // Its exec readiness probe outlives its timeout: a failure, never ready.
    await expect
      .poll(async () => (await events('hooks')).map((e) => e.message), { timeout: 20_000 })
      .toContain('Readiness probe failed: command "sleep 3" timed out');
    expect(await jsonpath('hooks', '.status.containerStatuses[0].ready')).toBe('false');

    await expect
      .poll(() => eventLines('badhook'), { timeout: 60_000 })
      .toEqual(
        expect.arrayContaining([
          'Warning FailedPostStartHook PostStartHook failed',
          'Normal Killing FailedPostStartHook',
        ]),
      );
    await expect
      .poll(() => jsonpath('badhook', '.status.containerStatuses[0].state.waiting.reason'), {
        timeout: 30_000,
      })
      .toMatch(/^(PostStartHookError|CrashLoopBackOff)$/);
    const uid = await jsonpath('badhook', '.metadata.uid');
    const message = await jsonpath('badhook', '.status.containerStatuses[0].state.waiting.message');
    if (
      (await jsonpath('badhook', '.status.containerStatuses[0].state.waiting.reason')) ===
      'PostStartHookError'
    ) {
      expect(message).toBe(
        `Exec lifecycle hook ([sh -c echo no >&2; exit 3]) for Container "c" in Pod "badhook_default(${uid})" failed - error: command 'sh -c echo no >&2; exit 3' exited with 3: , message: "no\\n"`,
      );
    }
    expect(await jsonpath('badhook', '.status.containerStatuses[0].lastState.terminated.reason')).toBe(
      'Error',
    );
  }, 120_000);

  it('fails a pod past its activeDeadlineSeconds with DeadlineExceeded', async () => {
    await applyPod('deadline', { command: ['sleep', '600'] }, { activeDeadlineSeconds: 4 });
    await expect
      .poll(() => jsonpath('deadline', '.status.phase'), { timeout: 60_000, interval: 500 })
      .toBe('Failed');
    expect(await jsonpath('deadline', '.status.reason')).toBe('DeadlineExceeded');
    expect(await jsonpath('deadline', '.status.message')).toBe(
      'Pod was active on the node longer than the specified deadline',
    );
    expect(await jsonpath('deadline', '.status.conditions[?(@.type=="Ready")].reason')).toBe('PodFailed');
    await expect
      .poll(() => jsonpath('deadline', '.status.containerStatuses[0].state.terminated.reason'), {
        timeout: 20_000,
      })
      .toBe('Error');
    // Events are written after the status, at the agent's event rate: poll for them.
    await expect
      .poll(() => eventLines('deadline'), { timeout: 20_000 })
      .toEqual(
        expect.arrayContaining([
          'Normal DeadlineExceeded Pod was active on the node longer than the specified deadline',
          'Normal Killing Stopping container c',
        ]),
      );
    // Failed for good: the container is not started again.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await jsonpath('deadline', '.status.containerStatuses[0].restartCount')).toBe('0');
    expect(await jsonpath('deadline', '.status.phase')).toBe('Failed');
  }, 90_000);

  it('deletes every pod, leaving nothing in the runtime', async () => {
    await k('delete', 'pods', '--all', '--wait=false');
    await expect
      .poll(async () => (await k('get', 'pods', '-o', 'name')).trim(), { timeout: 60_000 })
      .toBe('');
    expect(await agent.cri.listPodSandbox()).toEqual([]);
  }, 90_000);
});
