/**
 * The pod workers on real containers (no API server): init containers in order, env and
 * command expansion, status as kubelet writes it, CrashLoopBackOff, ErrImagePull then
 * ImagePullBackOff, termination, pods the API shows finished left finished, a privileged container
 * and the pod's sysctls, and a container
 * started beside the agent by `ctr` untouched.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod, PodStatus, Service } from '../../src/api/types/core-v1.js';
import { CriClient } from '../../src/agent/cri/client.js';
import { Backoff } from '../../src/agent/pod/backoff.js';
import type { EventSink } from '../../src/agent/pod/events.js';
import { PodWorkers } from '../../src/agent/pod/workers.js';
import { ImageManager } from '../../src/agent/runtime/images.js';
import { PodRuntime } from '../../src/agent/runtime/runtime.js';
import { RuntimeWatcher } from '../../src/agent/runtime/watcher.js';
import { BUSYBOX_IMAGE, requireContainerd, startContainerd, type Containerd } from '../support/containerd.js';

const enabled = requireContainerd();

interface Recorded {
  uid: string;
  type: string;
  reason: string;
  message: string;
  fieldPath: string | undefined;
}

/** The API server's Service, whose variables every container gets. */
const MASTER_SERVICE: Service = {
  metadata: { name: 'kubernetes', namespace: 'default' },
  spec: { clusterIP: '10.0.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] },
};

function pod(name: string, spec: NonNullable<Pod['spec']>): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}-${Math.random().toString(36).slice(2, 8)}` },
    spec,
  };
}

describe.runIf(enabled)('pod workers on containerd', () => {
  let ctrd: Containerd;
  let cri: CriClient;
  let logs: string;
  let workers: PodWorkers;
  let watcher: RuntimeWatcher;
  const statuses = new Map<string, PodStatus>();
  const events: Recorded[] = [];
  const terminated = new Set<string>();

  beforeAll(async () => {
    ctrd = await startContainerd({ cni: { bridge: 'cappods0', subnet: '10.244.251.0/24' } });
    cri = new CriClient(ctrd.endpoint);
    logs = await mkdtemp(join(tmpdir(), 'capstan-pods-logs-'));
    const runtime = new PodRuntime(cri, {
      podLogsDir: logs,
      cgroupRoot: ctrd.cgroupParent,
      clusterDNS: [],
      clusterDomain: 'cluster.local',
    });
    const sink: EventSink = {
      event: (p, type, reason, message, fieldPath) =>
        events.push({ uid: p.metadata.uid ?? '', type, reason, message, fieldPath }),
    };
    const configMaps = new Map([['default/cm', { metadata: { name: 'cm' }, data: { COLOR: 'blue' } }]]);
    workers = new PodWorkers(
      {
        runtime,
        images: new ImageManager(cri, sink),
        events: sink,
        backoff: new Backoff(),
        envContext: (_p, podIPs) => ({
          lookup: {
            configMap: (ns, n) => Promise.resolve(configMaps.get(`${ns}/${n}`)),
            secret: () => Promise.resolve(undefined),
            services: () => Promise.resolve([MASTER_SERVICE]),
          },
          hostIPs: ['192.0.2.10'],
          podIPs,
          nodeAllocatable: { cpu: 2, memory: 4 * 2 ** 30 },
        }),
      },
      {
        onStatus: (r, s) => statuses.set(r.pod.metadata.uid ?? '', s),
        onTerminated: (r) => terminated.add(r.pod.metadata.uid ?? ''),
        hostIPs: () => ['192.0.2.10'],
      },
    );
    watcher = new RuntimeWatcher(runtime, ctrd.endpoint, {
      wake: (uid) => workers.wake(uid),
      relisted: () => undefined,
      health: () => undefined,
    });
    watcher.start();
  }, 120_000);

  afterAll(async () => {
    watcher?.stop();
    await workers?.stop();
    cri?.close();
    await ctrd?.stop();
    if (logs) await rm(logs, { recursive: true, force: true });
  }, 120_000);

  it('runs init containers in order, then the app with its env, and reports kubelet status', async () => {
    const p = pod('web', {
      restartPolicy: 'Always',
      initContainers: [
        { name: 'init-a', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'sleep 0.3'] },
        { name: 'init-b', image: BUSYBOX_IMAGE, command: ['true'] },
      ],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c'],
          args: [
            'echo color=$(COLOR) pod=$(POD_NAME) ip=$POD_IP mem=$MEM api=$KUBERNETES_SERVICE_HOST:$(KUBERNETES_SERVICE_PORT); exec sleep 3600',
          ],
          env: [
            { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cm', key: 'COLOR' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          ],
          resources: { limits: { memory: '64Mi' } },
        },
      ],
    });
    const uid = p.metadata.uid ?? '';
    workers.update(p);
    await expect.poll(() => statuses.get(uid)?.phase, { timeout: 30_000 }).toBe('Running');
    const s = statuses.get(uid);
    expect(s?.qosClass).toBe('Burstable');
    expect(s?.hostIP).toBe('192.0.2.10');
    expect(s?.podIP).toMatch(/^10\.244\.251\./);
    expect(s?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'PodReadyToStartContainers=True',
      'Initialized=True',
      'Ready=True',
      'ContainersReady=True',
    ]);
    expect(s?.initContainerStatuses?.map((c) => [c.name, c.state?.terminated?.reason, c.ready])).toEqual([
      ['init-a', 'Completed', true],
      ['init-b', 'Completed', true],
    ]);
    const app = s?.containerStatuses?.[0];
    expect(app?.state?.running?.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(app?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(app?.image).toBe(BUSYBOX_IMAGE);
    expect(app?.imageID).toMatch(/sha256:/);
    expect([app?.ready, app?.started, app?.restartCount]).toEqual([true, true, 0]);
    // init-a finished before init-b started, which finished before app started
    const initA = s?.initContainerStatuses?.[0]?.state?.terminated;
    const initB = s?.initContainerStatuses?.[1]?.state?.terminated;
    expect(Date.parse(initA?.finishedAt ?? '')).toBeLessThanOrEqual(Date.parse(initB?.startedAt ?? ''));
    const created = events.filter((e) => e.uid === uid && e.reason === 'Created').map((e) => e.message);
    expect(created).toEqual([
      'Created container: init-a',
      'Created container: init-b',
      'Created container: app',
    ]);
    const logFile = join(logs, `default_web_${uid}`, 'app', '0.log');
    await expect
      .poll(() => readFile(logFile, 'utf8').catch(() => ''), { timeout: 5000 })
      .toContain(`color=blue pod=web ip=${s?.podIP ?? ''} mem=64 api=10.0.0.1:443`);

    workers.update({
      ...p,
      metadata: { ...p.metadata, deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 1 },
    });
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
    expect(await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } })).toEqual([]);
    expect(events.filter((e) => e.uid === uid && e.reason === 'Killing').map((e) => e.message)).toEqual([
      'Stopping container app',
    ]);
  }, 60_000);

  it('runs a privileged container beside an unprivileged one, with the pod’s sysctls in its sandbox', async () => {
    const p = pod('priv', {
      restartPolicy: 'Never',
      securityContext: { sysctls: [{ name: 'kernel/shm_rmid_forced', value: '1' }] },
      containers: [
        {
          name: 'priv',
          image: BUSYBOX_IMAGE,
          securityContext: { privileged: true },
          command: ['sh', '-c', 'cat /proc/sys/kernel/shm_rmid_forced; grep CapEff /proc/self/status'],
        },
        {
          name: 'plain',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', 'cat /proc/sys/kernel/shm_rmid_forced; grep CapEff /proc/self/status'],
        },
      ],
    });
    const uid = p.metadata.uid ?? '';
    workers.update(p);
    await expect.poll(() => statuses.get(uid)?.phase, { timeout: 30_000 }).toBe('Succeeded');
    const dir = join(logs, `default_priv_${uid}`);
    const lines = async (c: string) =>
      (await readFile(join(dir, c, '0.log'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split(' ').slice(3).join(' '));
    const [privSysctl, privCaps] = await lines('priv');
    const [plainSysctl, plainCaps] = await lines('plain');
    expect([privSysctl, plainSysctl]).toEqual(['1', '1']);
    // Every capability for the privileged one, the runtime's default few for the other.
    const caps = (line: string | undefined) => BigInt(`0x${line?.split(/\s+/)[1] ?? '0'}`);
    expect(caps(privCaps)).toBeGreaterThan(caps(plainCaps));
    expect(caps(privCaps) & caps(plainCaps)).toBe(caps(plainCaps));
    workers.remove(uid);
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
  }, 60_000);

  it('restarts a crashing container with CrashLoopBackOff', async () => {
    const p = pod('crash', {
      restartPolicy: 'Always',
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo bye; exit 2'] }],
    });
    const uid = p.metadata.uid ?? '';
    workers.update(p);
    await expect
      .poll(() => statuses.get(uid)?.containerStatuses?.[0]?.state?.waiting?.reason, { timeout: 30_000 })
      .toBe('CrashLoopBackOff');
    const c = statuses.get(uid)?.containerStatuses?.[0];
    expect(c?.restartCount).toBe(1);
    expect(c?.lastState?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(c?.state?.waiting?.message).toMatch(
      /^back-off 10s restarting failed container=c pod=crash_default\(uid-crash-/,
    );
    expect(statuses.get(uid)?.phase).toBe('Running');
    expect(events.some((e) => e.uid === uid && e.reason === 'BackOff' && e.type === 'Warning')).toBe(true);
    workers.remove(uid);
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
  }, 60_000);

  it('reports ErrImagePull, then ImagePullBackOff, for an image that does not exist', async () => {
    const p = pod('noimage', {
      containers: [
        { name: 'c', image: '127.0.0.1:1/capstan/does-not-exist:1', imagePullPolicy: 'IfNotPresent' },
      ],
    });
    const uid = p.metadata.uid ?? '';
    const seen = new Set<string>();
    workers.update(p);
    await expect
      .poll(
        () => {
          const r = statuses.get(uid)?.containerStatuses?.[0]?.state?.waiting?.reason;
          if (r) seen.add(r);
          return seen.has('ErrImagePull') && seen.has('ImagePullBackOff');
        },
        { timeout: 60_000, interval: 50 },
      )
      .toBe(true);
    expect(statuses.get(uid)?.phase).toBe('Pending');
    expect(events.filter((e) => e.uid === uid).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['Pulling', 'Failed', 'BackOff']),
    );
    workers.remove(uid);
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
  }, 90_000);

  it('never runs a pod the API already shows Succeeded, and keeps its phase and reason', async () => {
    // What an agent restart finds once a finished pod's containers are gone: the API's terminal
    // phase alone. kubelet's SyncPod ends there; running it again would repeat a finished Job.
    const p: Pod = {
      ...pod('finished', {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }],
      }),
      status: { phase: 'Succeeded', reason: 'Done', message: 'finished before the agent restarted' },
    };
    const uid = p.metadata.uid ?? '';
    workers.update(p);
    await expect.poll(() => statuses.get(uid)?.phase, { timeout: 30_000 }).toBe('Succeeded');
    // A later sync (a wake from the runtime, a relist) must not start it either.
    workers.wake(uid);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } })).toEqual([]);
    expect(events.filter((e) => e.uid === uid).map((e) => e.reason)).toEqual([]);
    expect(statuses.get(uid)).toMatchObject({
      phase: 'Succeeded',
      reason: 'Done',
      message: 'finished before the agent restarted',
    });
    workers.remove(uid);
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
  }, 60_000);

  it('stops a running pod once the API shows it Failed, and reports Failed from then on', async () => {
    const p = pod('failed-in-api', {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }],
    });
    const uid = p.metadata.uid ?? '';
    workers.update(p);
    await expect.poll(() => statuses.get(uid)?.phase, { timeout: 30_000 }).toBe('Running');
    workers.update({
      ...p,
      status: { ...statuses.get(uid), phase: 'Failed', reason: 'Evicted', message: 'x' },
    });
    await expect
      .poll(() => statuses.get(uid)?.containerStatuses?.[0]?.state?.terminated?.reason, { timeout: 30_000 })
      .toBeDefined();
    const s = statuses.get(uid);
    expect([s?.phase, s?.reason, s?.message]).toEqual(['Failed', 'Evicted', 'x']);
    // Restart policy Always, yet nothing starts again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(statuses.get(uid)?.containerStatuses?.[0]?.restartCount).toBe(0);
    const sandboxes = await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
    expect(sandboxes.map((sb) => sb.state)).toEqual(['SANDBOX_NOTREADY']);
    workers.remove(uid);
    await expect.poll(() => terminated.has(uid), { timeout: 30_000 }).toBe(true);
  }, 60_000);

  it('never touches a container started beside it by ctr', async () => {
    await ctrd.ctr('-n', 'k8s.io', 'run', '-d', BUSYBOX_IMAGE, 'foreign-1', 'sleep', '3600');
    const p = pod('orphan', {
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }],
    });
    workers.update(p);
    await expect.poll(() => statuses.get(p.metadata.uid ?? '')?.phase, { timeout: 30_000 }).toBe('Running');
    // The agent that ran it is gone (else its worker, woken by the container's death, would start
    // the pod again); a new worker set that knows no pod treats the pod as an orphan, and only it.
    watcher.stop();
    await workers.stop();
    const runtime = new PodRuntime(cri, {
      podLogsDir: logs,
      cgroupRoot: ctrd.cgroupParent,
      clusterDNS: [],
      clusterDomain: 'cluster.local',
    });
    const pods = await runtime.listPods();
    expect([...pods.values()].map((x) => x.name)).toEqual(['orphan']);
    const fresh = new PodWorkers(
      {
        runtime,
        images: new ImageManager(cri, { event: () => undefined }),
        events: { event: () => undefined },
        backoff: new Backoff(),
        envContext: () => ({
          lookup: {
            configMap: () => Promise.resolve(undefined),
            secret: () => Promise.resolve(undefined),
            services: () => Promise.resolve([]),
          },
          hostIPs: [],
          podIPs: [],
          nodeAllocatable: { cpu: 1, memory: 1 },
        }),
      },
      { onStatus: () => undefined, onTerminated: () => undefined, hostIPs: () => [] },
    );
    await fresh.cleanupOrphans(pods);
    expect((await runtime.listPods()).size).toBe(0);
    expect(await ctrd.ctr('-n', 'k8s.io', 'tasks', 'ls')).toMatch(/foreign-1\s+\d+\s+RUNNING/);
    await ctrd.ctr('-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', 'foreign-1');
  }, 60_000);
});
