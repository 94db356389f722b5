/**
 * The volume manager on this machine's mounts (root, no API server): a projected token file is
 * rewritten in place once the token passes 80% of its life, and the pod is woken for it; a memory
 * emptyDir is a tmpfs the manager unmounts at teardown; a mount the agent did not make under a
 * pod directory is left alone, and so is the directory; the pod's fsGroup owns its volumes.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { VolumeManager } from '../../src/agent/volumes/manager.js';
import { mountPodVolumes } from '../../src/agent/volumes/pod-volumes.js';
import { TokenManager } from '../../src/agent/volumes/tokens.js';

const run = promisify(execFile);

function rootOrFail(): boolean {
  if (process.getuid?.() === 0) return true;
  if (process.env['CI'] === 'true') throw new Error('volume manager tests need root (tmpfs mounts)');
  console.warn('SKIPPING: volume manager tests need root (tmpfs mounts)');
  return false;
}

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
}

describe.runIf(rootOrFail())('volume manager', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'capstan-volmgr-'));
  });
  afterEach(async () => {
    for (const m of mountsUnder(root).reverse()) await run('umount', [m]).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('rewrites a projected token at 80% of its life and wakes the pod for it', async () => {
    let now = Date.now();
    let n = 0;
    const tokens = new TokenManager(
      (_ns, _sa, body) =>
        Promise.resolve({
          metadata: {},
          spec: body.spec ?? {},
          status: { token: `token-${++n}`, expirationTimestamp: new Date(now + 600_000).toISOString() },
        }),
      () => now,
    );
    const woken: string[] = [];
    const manager = new VolumeManager({
      rootDir: root,
      nodeAllocatable: { cpu: 1, memory: 2 ** 30 },
      wake: (uid) => woken.push(uid),
      tokens,
      now: () => now,
    });
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', labels: { a: 'b' } },
      spec: {
        volumes: [
          {
            name: 'tok',
            projected: {
              sources: [
                { serviceAccountToken: { expirationSeconds: 600, path: 'token' } },
                { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
              ],
            },
          },
          { name: 'mem', emptyDir: { medium: 'Memory' } },
        ],
      },
    };
    const first = await manager.setUp(pod);
    expect(first.complete).toBe(true);
    const tokDir = join(root, 'pods/uid-1/volumes/kubernetes.io~projected/tok');
    expect(first.volumes.get('tok')).toEqual({ hostPath: tokDir, readOnly: true });
    expect(await readFile(join(tokDir, 'token'), 'utf8')).toBe('token-1');
    expect(await readFile(join(tokDir, 'labels'), 'utf8')).toBe('a="b"');
    const podMounts = mountsUnder(join(root, 'pods/uid-1')).sort();
    expect(podMounts).toEqual([join(root, 'pods/uid-1/volumes/kubernetes.io~empty-dir/mem'), tokDir].sort());

    now += 470_000;
    await manager.setUp(pod);
    expect(await readFile(join(tokDir, 'token'), 'utf8')).toBe('token-1');
    expect(woken).toEqual([]);
    // 479.8 s of 600: the token is still good, and the pod is woken once it is not (at 480 s).
    now += 9_800;
    await manager.setUp(pod);
    expect(await readFile(join(tokDir, 'token'), 'utf8')).toBe('token-1');
    await expect.poll(() => woken, { timeout: 2000 }).toEqual(['uid-1']);
    now += 300;
    await manager.setUp(pod);
    expect(await readFile(join(tokDir, 'token'), 'utf8')).toBe('token-2');

    expect(await manager.tearDown('uid-1')).toBe(true);
    expect(existsSync(join(root, 'pods/uid-1'))).toBe(false);
    expect(mountsUnder(root)).toEqual([]);
    manager.stop();
  });

  it("gives volumes the pod's fsGroup, and an unchanged volume is not rewritten", async () => {
    const manager = new VolumeManager({
      rootDir: root,
      nodeAllocatable: { cpu: 1, memory: 2 ** 30 },
      wake: () => {},
    });
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-4' },
      spec: {
        securityContext: { fsGroup: 2345 },
        volumes: [
          {
            name: 'd',
            downwardAPI: { items: [{ path: 'name', mode: 0o400, fieldRef: { fieldPath: 'metadata.name' } }] },
          },
          { name: 'e', emptyDir: {} },
        ],
      },
    };
    expect((await manager.setUp(pod)).complete).toBe(true);
    const d = join(root, 'pods/uid-4/volumes/kubernetes.io~downward-api/d');
    const file = await stat(join(d, 'name'));
    expect([file.gid, file.mode & 0o7777]).toEqual([2345, 0o440]);
    const e = await stat(join(root, 'pods/uid-4/volumes/kubernetes.io~empty-dir/e'));
    expect([e.gid, e.mode & 0o7777]).toEqual([2345, 0o2777]);
    const data = await readlink(join(d, '..data'));
    await manager.setUp(pod);
    expect(await readlink(join(d, '..data'))).toBe(data);
    expect(await manager.tearDown('uid-4')).toBe(true);
    manager.stop();
  });

  it("retries failing volumes with back-off and gives kubelet's give-up event after 2m3s", async () => {
    const manager = new VolumeManager({
      rootDir: root,
      nodeAllocatable: { cpu: 1, memory: 2 ** 30 },
      wake: () => {},
    });
    const events: string[] = [];
    const sink = {
      event: (_p: Pod, type: string, reason: string, message: string) =>
        events.push(`${type} ${reason} ${message}`),
    };
    let now = 1_000_000;
    const record = {
      pod: {
        metadata: { name: 'p', namespace: 'ns', uid: 'uid-5' },
        spec: {
          volumes: [
            { name: 'z', configMap: { name: 'gone' } },
            { name: 'a', configMap: { name: 'gone-too' } },
            { name: 'ok', emptyDir: {} },
          ],
        },
      } as Pod,
    };
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) delays.push(await mountPodVolumes(manager, sink, record, () => now));
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(events.slice(0, 2)).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "z" : configmap "gone" not found',
      'Warning FailedMount MountVolume.SetUp failed for volume "a" : configmap "gone-too" not found',
    ]);
    expect(events.some((e) => e.includes('Unable to attach'))).toBe(false);
    now += 123_000;
    await mountPodVolumes(manager, sink, record, () => now);
    expect(events.at(-1)).toBe(
      'Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[a z], unattached volumes=[], failed to process volumes=[]: context deadline exceeded',
    );
    expect(await manager.tearDown('uid-5')).toBe(true);
    manager.stop();
  });

  it('never unmounts what it did not mount, and then keeps the pod directory', async () => {
    const manager = new VolumeManager({
      rootDir: root,
      nodeAllocatable: { cpu: 1, memory: 2 ** 30 },
      wake: () => {},
    });
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-2' },
      spec: { volumes: [{ name: 'e', emptyDir: {} }] },
    };
    expect((await manager.setUp(pod)).complete).toBe(true);
    const foreign = join(root, 'pods/uid-2/volumes/kubernetes.io~empty-dir/e/foreign');
    await mkdir(foreign);
    await run('mount', ['-t', 'tmpfs', 'tmpfs', foreign]);
    expect(await manager.tearDown('uid-2')).toBe(false);
    expect(mountsUnder(root)).toEqual([foreign]);
    expect(existsSync(foreign)).toBe(true);
    manager.stop();
  });

  it('reports a missing ConfigMap standalone with kube wording, without throwing', async () => {
    const manager = new VolumeManager({
      rootDir: root,
      nodeAllocatable: { cpu: 1, memory: 2 ** 30 },
      wake: () => {},
    });
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-3' },
      spec: {
        volumes: [
          { name: 'c', configMap: { name: 'cm' } },
          { name: 'o', configMap: { name: 'x', optional: true } },
        ],
      },
    };
    const r = await manager.setUp(pod);
    expect(r.complete).toBe(false);
    expect(r.errors.map((e) => e.message)).toEqual([
      'MountVolume.SetUp failed for volume "c" : configmap "cm" not found',
    ]);
    expect([...r.volumes.keys()]).toEqual(['o']);
    expect(await manager.tearDown('uid-3')).toBe(true);
    manager.stop();
  });
});
