/**
 * The pure parts of simulated nodes: annotations, addresses, the timer queue, flags, and the
 * pod statuses a kubelet would report.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/api/types/core-v1.js';
import { FlagError } from '../../../src/flags/flags.js';
import { nodeControl, podBehaviour } from '../../../src/agent/simulated/annotations.js';
import {
  cidrContains,
  fallbackPodCidr,
  formatIp,
  nodeInternalIp,
  parseCidr,
  parseIp,
  PodIpPool,
} from '../../../src/agent/simulated/ip-pool.js';
import { nodeStatus, nodeStatusChanged } from '../../../src/agent/simulated/node-object.js';
import {
  DEFAULT_OPTIONS,
  parseSimulatedAgentArgs,
  parseTaint,
} from '../../../src/agent/simulated/options.js';
import {
  imageId,
  normalizeImage,
  qosClass,
  restartedStatus,
  startedStatus,
  stoppedStatus,
} from '../../../src/agent/simulated/pod-status.js';
import { TimerQueue } from '../../../src/agent/simulated/timer-queue.js';

describe('annotations', () => {
  it('reads outcomes and reports what it cannot read', () => {
    expect(podBehaviour(undefined)).toMatchObject({
      completeAfterMs: undefined,
      exitCode: 0,
      stopAfterMs: 0,
    });
    expect(
      podBehaviour({ 'sim.capstan.dev/complete-after': '1m30s', 'sim.capstan.dev/exit-code': '3' }),
    ).toMatchObject({
      completeAfterMs: 90_000,
      exitCode: 3,
      problems: [],
    });
    expect(podBehaviour({ 'sim.capstan.dev/exit-code': '1' }).completeAfterMs).toBe(0);
    const bad = podBehaviour({
      'sim.capstan.dev/complete-after': 'soon',
      'sim.capstan.dev/exit-code': '300',
    });
    expect(bad.completeAfterMs).toBeUndefined();
    expect(bad.exitCode).toBe(0);
    expect(bad.problems).toHaveLength(2);
    expect(podBehaviour({ 'sim.capstan.dev/stop-after': '-1s' }).problems).toHaveLength(1);
  });

  it('reads node controls', () => {
    expect(nodeControl(undefined)).toEqual({ heartbeat: true, ready: true });
    expect(nodeControl({ 'sim.capstan.dev/heartbeat': 'stopped', 'sim.capstan.dev/ready': 'false' })).toEqual(
      {
        heartbeat: false,
        ready: false,
      },
    );
  });
});

describe('addresses', () => {
  it('parses and formats IPv4 and IPv6', () => {
    expect(formatIp(4, parseIp('10.1.2.3')?.value ?? 0n)).toBe('10.1.2.3');
    expect(formatIp(6, parseIp('fd00::1')?.value ?? 0n)).toBe('fd00::1');
    expect(formatIp(6, parseIp('2001:db8:0:0:1:0:0:1')?.value ?? 0n)).toBe('2001:db8::1:0:0:1');
    expect(parseIp('10.1.2')).toBeUndefined();
    expect(parseCidr('10.244.1.7/24')).toMatchObject({ family: 4, prefix: 24 });
    expect(cidrContains(parseCidr('10.244.1.0/24')!, '10.244.1.200')).toBe(true);
    expect(cidrContains(parseCidr('10.244.1.0/24')!, '10.244.2.1')).toBe(false);
  });

  it('gives nodes unroutable, distinct addresses and pod ranges', () => {
    expect(nodeInternalIp(0)).toBe('198.18.0.1');
    expect(nodeInternalIp(999)).toBe('198.18.3.232');
    expect(fallbackPodCidr(0)).toBe('100.64.0.0/24');
    expect(fallbackPodCidr(300)).toBe('100.65.44.0/24');
  });

  it('allocates each pod one address from .2, never twice, and reuses released ones last', () => {
    const pool = new PodIpPool('10.244.3.0/30'); // one usable host address: .2
    expect(pool.allocate('a')).toBe('10.244.3.2');
    expect(pool.allocate('a')).toBe('10.244.3.2');
    expect(pool.allocate('b')).toBeUndefined();
    pool.release('a');
    expect(pool.allocate('b')).toBe('10.244.3.2');
    const big = new PodIpPool('10.0.0.0/24');
    const seen = new Set<string>();
    for (let i = 0; i < 253; i++) seen.add(big.allocate(`p${i}`) ?? 'none');
    expect(seen.size).toBe(253);
    expect(seen.has('none')).toBe(false);
    expect(big.allocate('one-more')).toBeUndefined();
    expect(big.claim('x', '10.0.0.5')).toBe(false); // held by another pod
    const v6 = new PodIpPool('fd00:10:244:1::/64');
    expect(v6.allocate('a')).toBe('fd00:10:244:1::2');
  });
});

async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

describe('TimerQueue', () => {
  it('fires each key once at its latest deadline, in order', async () => {
    const fired: string[] = [];
    const q = new TimerQueue<string>((k) => fired.push(k));
    q.after('b', 30);
    q.after('a', 10);
    q.after('c', 20);
    q.after('b', 5); // moved earlier
    q.after('d', 15);
    q.cancel('d');
    await until(() => fired.length >= 3);
    await new Promise((r) => setTimeout(r, 30)); // and 'd' stays cancelled
    expect(fired).toEqual(['b', 'a', 'c']);
    expect(q.size).toBe(0);
    q.stop();
  });

  it('fires deadlines on a grid when asked to', async () => {
    const batches: string[][] = [];
    let open = false;
    const q = new TimerQueue<string>(
      (k) => {
        if (!open) {
          batches.push([]);
          open = true;
          setImmediate(() => (open = false));
        }
        batches.at(-1)?.push(k);
      },
      { granularityMs: 200 },
    );
    const slot = Math.ceil(Date.now() / 200) * 200 + 600;
    q.at('a', slot - 150);
    q.at('b', slot - 20);
    await until(() => batches.flat().length === 2);
    expect(batches).toEqual([['a', 'b']]);
    q.stop();
  });

  it('keeps one timer for many keys and survives a throwing callback', async () => {
    let n = 0;
    const q = new TimerQueue<number>((k) => {
      n++;
      if (k === 3) throw new Error('boom');
    });
    for (let i = 0; i < 5000; i++) q.after(i, i % 20);
    await until(() => n === 5000);
    expect(q.size).toBe(0);
    q.stop();
  });
});

describe('flags', () => {
  it('parses the command line with kubelet defaults', () => {
    const args = parseSimulatedAgentArgs([
      '--simulate',
      '--kubeconfig=/tmp/k',
      '--nodes=5',
      '--node-labels=zone=a,rack=1',
      '--register-with-taints=dedicated=sim:NoSchedule,gpu:NoExecute',
    ]);
    expect(args?.options).toMatchObject({
      nodes: 5,
      labels: { zone: 'a', rack: '1' },
      taints: [
        { key: 'dedicated', value: 'sim', effect: 'NoSchedule' },
        { key: 'gpu', effect: 'NoExecute' },
      ],
      leaseDurationSeconds: 40,
      leaseRenewIntervalMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
      pods: 110,
    });
    expect(parseSimulatedAgentArgs(['--help'])).toBeUndefined();
    expect(() => parseSimulatedAgentArgs(['--simulate'])).toThrow(FlagError);
    expect(() => parseTaint('a=b:Sometimes')).toThrow(FlagError);
  });
});

function pod(extra: Partial<Pod['spec']> = {}, status?: Pod['status']): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u-1' },
    spec: { containers: [{ name: 'c', image: 'nginx' }], restartPolicy: 'Never', ...extra },
    ...(status === undefined ? {} : { status }),
  };
}

describe('pod status', () => {
  const T0 = Date.parse('2026-01-01T00:00:00Z');

  it('reports a started pod as a kubelet does', () => {
    const p = pod(
      { initContainers: [{ name: 'init', image: 'busybox:1.36' }] },
      {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-12-31T23:59:59Z' }],
      },
    );
    const s = startedStatus(p, { hostIP: '198.18.0.1', podIPs: ['10.244.0.2'] }, T0);
    expect(s.phase).toBe('Running');
    expect(s.podIP).toBe('10.244.0.2');
    expect(s.podIPs).toEqual([{ ip: '10.244.0.2' }]);
    expect(s.hostIPs).toEqual([{ ip: '198.18.0.1' }]);
    expect(s.startTime).toBe('2026-01-01T00:00:00Z');
    expect(s.qosClass).toBe('BestEffort');
    expect(s.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ]);
    expect(s.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime).toBe(
      '2025-12-31T23:59:59Z',
    );
    const c = s.containerStatuses?.[0];
    expect(c).toMatchObject({
      name: 'c',
      ready: true,
      started: true,
      restartCount: 0,
      image: 'docker.io/library/nginx:latest',
      state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
    });
    expect(c?.containerID).toMatch(/^sim:\/\/[0-9a-f]{64}$/);
    expect(s.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
  });

  it('holds Ready back for readiness gates', () => {
    const p = pod({ readinessGates: [{ conditionType: 'example.com/gate' }] });
    const s = startedStatus(p, { hostIP: 'h', podIPs: ['i'] }, T0);
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
    });
  });

  it('ends pods Succeeded or Failed with kubelet reasons, or restarts their containers', () => {
    const running = pod({}, startedStatus(pod(), { hostIP: 'h', podIPs: ['i'] }, T0));
    const ok = stoppedStatus(running, 0, T0 + 2000);
    expect(ok.phase).toBe('Succeeded');
    expect(ok.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(ok.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PodCompleted',
    });
    expect(ok.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'True',
      reason: 'PodCompleted',
    });
    const failed = stoppedStatus(running, 2, T0 + 2000);
    expect(failed.phase).toBe('Failed');
    expect(failed.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(failed.conditions?.find((c) => c.type === 'ContainersReady')).toMatchObject({
      reason: 'PodFailed',
    });
    const again = restartedStatus(running, 1, T0 + 2000);
    expect(again.containerStatuses?.[0]).toMatchObject({
      restartCount: 1,
      lastState: { terminated: { exitCode: 1 } },
      state: { running: { startedAt: '2026-01-01T00:00:02Z' } },
    });
  });

  it('normalizes images and classifies QoS', () => {
    expect(normalizeImage('registry.k8s.io/pause:3.10')).toBe('registry.k8s.io/pause:3.10');
    expect(normalizeImage('library/redis')).toBe('docker.io/library/redis:latest');
    expect(imageId('nginx')).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    const res = (r: Record<string, string>, l: Record<string, string>): Pod =>
      pod({ containers: [{ name: 'c', resources: { requests: r, limits: l } }] });
    expect(qosClass(res({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))).toBe('Guaranteed');
    expect(qosClass(res({ cpu: '100m' }, {}))).toBe('Burstable');
  });
});

describe('node status', () => {
  it('reports kubelet conditions and notices only real changes', () => {
    const s = nodeStatus(
      DEFAULT_OPTIONS,
      { slot: 2, ready: true, current: undefined, bootMs: 0 },
      Date.now(),
    );
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(s.addresses).toEqual([
      { type: 'InternalIP', address: '198.18.0.3' },
      { type: 'Hostname', address: 'sim-node-2' },
    ]);
    expect(s.capacity).toMatchObject({ cpu: '32', memory: '256Gi', pods: '110' });
    const current = { metadata: { name: 'sim-node-2' }, status: s };
    const later = nodeStatus(
      DEFAULT_OPTIONS,
      { slot: 2, ready: true, current, bootMs: 0 },
      Date.now() + 60_000,
    );
    expect(nodeStatusChanged(current, later)).toBe(false);
    const notReady = nodeStatus(DEFAULT_OPTIONS, { slot: 2, ready: false, current, bootMs: 0 }, Date.now());
    expect(nodeStatusChanged(current, notReady)).toBe(true);
    expect(notReady.conditions?.[3]).toMatchObject({ status: 'False', reason: 'KubeletNotReady' });
  });
});

describe('capstan agent --simulate', () => {
  it('answers bad flags with exit status 2 and help with 0', async () => {
    const { runSimulatedAgentCommand } = await import('../../../src/agent/simulated/command.js');
    const out: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const writeOut = process.stdout.write.bind(process.stdout);
    process.stderr.write = (chunk: string) => out.push(String(chunk)) > 0;
    process.stdout.write = (chunk: string) => out.push(String(chunk)) > 0;
    try {
      expect(await runSimulatedAgentCommand(['--simulate', '--nodes=3'])).toBe(2);
      expect(out.join('')).toContain('--kubeconfig is required');
      expect(
        await runSimulatedAgentCommand(['--simulate', '--kubeconfig=/k', '--register-with-taints=x']),
      ).toBe(2);
      expect(await runSimulatedAgentCommand(['--simulate', '--help'])).toBe(0);
      expect(out.join('')).toContain('--node-lease-renew-interval');
      expect(await runSimulatedAgentCommand(['--simulate', '--kubeconfig=/does/not/exist'])).toBe(1);
    } finally {
      process.stderr.write = write;
      process.stdout.write = writeOut;
    }
  });
});
