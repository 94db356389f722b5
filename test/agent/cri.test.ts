/**
 * The CRI client against a real containerd (test/support/containerd.ts): a sandbox with a bridge
 * network, a container running, ExecSync, its log file, stop and remove, and a clean machine after.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient, isCriNotFound } from '../../src/agent/cri/client.js';
import type { PodSandboxConfig } from '../../src/agent/cri/types.js';
import {
  BUSYBOX_IMAGE,
  PAUSE_IMAGE,
  requireContainerd,
  startContainerd,
  type Containerd,
} from '../support/containerd.js';

const enabled = requireContainerd();

describe.runIf(enabled)('CRI client on containerd', () => {
  let ctrd: Containerd;
  let cri: CriClient;
  let logDir: string;

  beforeAll(async () => {
    ctrd = await startContainerd({ cni: { bridge: 'capcri0', subnet: '10.244.250.0/24' } });
    cri = new CriClient(ctrd.endpoint);
    logDir = await mkdtemp(join(tmpdir(), 'capstan-cri-logs-'));
  }, 120_000);

  afterAll(async () => {
    cri?.close();
    const dir = ctrd?.dir;
    await ctrd?.stop();
    if (logDir) await rm(logDir, { recursive: true, force: true });
    if (dir) {
      expect(existsSync(dir)).toBe(false);
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir);
    }
  }, 120_000);

  it('answers Version, Status and the imported images', async () => {
    const v = await cri.version();
    expect(v.runtimeName).toBe('containerd');
    expect(v.runtimeApiVersion).toBe('v1');
    const conditions = await cri.status();
    expect(conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
    const tags = (await cri.listImages()).flatMap((i) => i.repoTags);
    expect(tags).toEqual(expect.arrayContaining([PAUSE_IMAGE, BUSYBOX_IMAGE]));
    expect(await cri.imageStatus(BUSYBOX_IMAGE)).toBeDefined();
    expect(await cri.imageStatus('docker.io/capstan/none:0')).toBeUndefined();
  });

  it('runs a sandbox and a container, execs, logs, stops and removes', async () => {
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'p1', uid: 'uid-p1', namespace: 'default', attempt: 0 },
      hostname: 'p1',
      logDirectory: logDir,
      labels: { 'io.kubernetes.pod.uid': 'uid-p1' },
      linux: { cgroupParent: `${ctrd.cgroupParent}/pod-uid-p1` },
    };
    const sb = await cri.runPodSandbox(sandboxConfig);
    const status = await cri.podSandboxStatus(sb);
    expect(status.state).toBe('SANDBOX_READY');
    expect(status.network?.ip).toMatch(/^10\.244\.250\./);

    const id = await cri.createContainer(
      sb,
      {
        metadata: { name: 'c1', attempt: 0 },
        image: { image: BUSYBOX_IMAGE },
        command: ['sh', '-c', 'echo hello from $GREETING; exec sleep 3600'],
        envs: [{ key: 'GREETING', value: 'capstan' }],
        logPath: 'c1/0.log',
        labels: { 'io.kubernetes.container.name': 'c1' },
      },
      sandboxConfig,
    );
    await cri.startContainer(id);
    expect((await cri.containerStatus(id)).state).toBe('CONTAINER_RUNNING');

    const out = await cri.execSync(id, ['sh', '-c', 'echo $GREETING; hostname; exit 3'], 10);
    expect(out.stdout.toString()).toBe('capstan\np1\n');
    expect(out.exitCode).toBe(3);

    // CRI log format: "<RFC3339Nano> stdout F <line>"
    const logFile = join(logDir, 'c1/0.log');
    await expect
      .poll(() => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''), { timeout: 5000 })
      .toMatch(/^\S+ stdout F hello from capstan\n/);

    const listed = await cri.listContainers({ labelSelector: { 'io.kubernetes.container.name': 'c1' } });
    expect(listed.map((c) => c.id)).toEqual([id]);

    await cri.stopContainer(id, 2);
    const stopped = await cri.containerStatus(id);
    expect(stopped.state).toBe('CONTAINER_EXITED');
    expect(stopped.exitCode).toBe(143); // SIGTERM
    await cri.removeContainer(id);
    await expect(cri.containerStatus(id)).rejects.toSatisfy(isCriNotFound);
    await cri.stopPodSandbox(sb);
    await cri.removePodSandbox(sb);
    expect(await cri.listPodSandbox()).toEqual([]);
  }, 60_000);
});
