/**
 * The volume pieces that need no containers: kube's atomic writer layout and its updates,
 * payloads (items, modes, optional, kube's error wording, downward API formatting), the token
 * manager's refresh at 80% of a token's life, and a container's mounts (subPath, subPathExpr,
 * read-only kinds, a sub path escaping its volume).
 */
import { lstat, mkdtemp, readFile, readdir, readlink, rm, stat, symlink, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TokenRequest } from '../../src/api/types/authentication-v1.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import { writeAtomic, type Payload } from '../../src/agent/volumes/atomic-writer.js';
import { MountConfigError } from '../../src/agent/volumes/errors.js';
import { makeMounts } from '../../src/agent/volumes/mounts.js';
import {
  PayloadError,
  configMapPayload,
  downwardPayload,
  secretPayload,
} from '../../src/agent/volumes/sources.js';
import { TokenManager } from '../../src/agent/volumes/tokens.js';

const file = (text: string, mode = 0o644): { data: Buffer; mode: number } => ({
  data: Buffer.from(text),
  mode,
});

describe('atomic writer', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-atomic-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lays files out as kube does: ..data -> ..<timestamp>, top-level links into ..data', async () => {
    const payload: Payload = new Map([
      ['color', file('blue')],
      ['nested/deep', file('x', 0o400)],
    ]);
    expect(await writeAtomic(dir, payload)).toBe(true);
    const ts = await readlink(join(dir, '..data'));
    expect(ts).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\w+$/);
    expect(await readlink(join(dir, 'color'))).toBe('..data/color');
    expect(await readlink(join(dir, 'nested'))).toBe('..data/nested');
    expect(await readFile(join(dir, 'nested/deep'), 'utf8')).toBe('x');
    expect((await stat(join(dir, 'nested/deep'))).mode & 0o777).toBe(0o400);
    expect((await readdir(dir)).sort()).toEqual(['..data', 'color', 'nested', ts].sort());
  });

  it('does nothing for the same payload, and swaps everything for a new one', async () => {
    await writeAtomic(
      dir,
      new Map([
        ['a', file('1')],
        ['b', file('2')],
      ]),
    );
    const first = await readlink(join(dir, '..data'));
    expect(
      await writeAtomic(
        dir,
        new Map([
          ['a', file('1')],
          ['b', file('2')],
        ]),
      ),
    ).toBe(false);
    expect(await readlink(join(dir, '..data'))).toBe(first);
    // A mode change alone is a change.
    expect(
      await writeAtomic(
        dir,
        new Map([
          ['a', file('1', 0o600)],
          ['b', file('2')],
        ]),
      ),
    ).toBe(true);
    const second = await readlink(join(dir, '..data'));
    expect(second).not.toBe(first);
    expect(await writeAtomic(dir, new Map([['a', file('new')]]))).toBe(true);
    const third = await readlink(join(dir, '..data'));
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('new');
    await expect(lstat(join(dir, 'b'))).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['..data', 'a', third].sort());
  });

  it('refuses paths kube refuses', async () => {
    await expect(writeAtomic(dir, new Map([['../x', file('')]]))).rejects.toThrow("must not contain '..'");
    await expect(writeAtomic(dir, new Map([['/abs', file('')]]))).rejects.toThrow('must be relative path');
    await expect(writeAtomic(dir, new Map([['..x', file('')]]))).rejects.toThrow("must not start with '..'");
  });
});

describe('payloads', () => {
  const cm = {
    metadata: { name: 'cm' },
    data: { a: 'A', b: 'B' },
    binaryData: { bin: Buffer.from([1, 2]).toString('base64') },
  };

  it('takes every key without items, and the named keys with their modes with items', () => {
    const all = configMapPayload('cm', cm, {}, 0o600);
    expect([...all.keys()].sort()).toEqual(['a', 'b', 'bin']);
    expect(all.get('bin')?.data).toEqual(Buffer.from([1, 2]));
    expect(all.get('a')?.mode).toBe(0o600);
    const some = configMapPayload(
      'cm',
      cm,
      { items: [{ key: 'a', path: 'dir/a.txt', mode: 0o400 }] },
      undefined,
    );
    expect([...some.entries()].map(([k, v]) => [k, v.data.toString(), v.mode])).toEqual([
      ['dir/a.txt', 'A', 0o400],
    ]);
    expect(configMapPayload('cm', cm, { items: [{ key: 'b', path: 'b' }] }, undefined).get('b')?.mode).toBe(
      0o644,
    );
  });

  it('words failures as kube does, and an optional source gives no files', () => {
    expect(() => configMapPayload('gone', undefined, {}, undefined)).toThrow(
      new PayloadError('configmap "gone" not found'),
    );
    expect(() => secretPayload('gone', undefined, {}, undefined)).toThrow('secret "gone" not found');
    expect(() => configMapPayload('cm', cm, { items: [{ key: 'zz', path: 'z' }] }, undefined)).toThrow(
      'configmap references non-existent config key: zz',
    );
    expect(() =>
      secretPayload('s', { metadata: {}, data: {} }, { items: [{ key: 'k', path: 'k' }] }, undefined),
    ).toThrow('references non-existent secret key: k');
    expect(configMapPayload('gone', undefined, { optional: true }, undefined).size).toBe(0);
    expect(
      configMapPayload('cm', cm, { optional: true, items: [{ key: 'zz', path: 'z' }] }, undefined).size,
    ).toBe(0);
    expect(
      secretPayload('s', { metadata: {}, data: { k: Buffer.from('v').toString('base64') } }, {}, undefined)
        .get('k')
        ?.data.toString(),
    ).toBe('v');
  });

  it('formats the downward API as kube does', () => {
    const pod: Pod = {
      metadata: {
        name: 'p',
        namespace: 'ns',
        uid: 'u1',
        labels: { b: '2', a: 'x"y' },
        annotations: { n: 'v' },
      },
      spec: {
        containers: [{ name: 'c', resources: { limits: { memory: '64Mi' }, requests: { cpu: '250m' } } }],
      },
    };
    const p = downwardPayload(
      pod,
      [
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
        { path: 'one', fieldRef: { fieldPath: "metadata.annotations['n']" } },
        { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
        { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } },
        { path: 'cpu', resourceFieldRef: { containerName: 'c', resource: 'requests.cpu', divisor: '1m' } },
        // A stored divisor of "0" (the API's empty quantity) and none at all both mean 1; cpu rounds up.
        { path: 'cpu0', resourceFieldRef: { containerName: 'c', resource: 'requests.cpu', divisor: '0' } },
        { path: 'cpuLimit', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' } },
      ],
      undefined,
      { nodeAllocatable: { cpu: 2, memory: 2 ** 30 } },
    );
    const text = (k: string): string | undefined => p.get(k)?.data.toString();
    expect(text('labels')).toBe('a="x\\"y"\nb="2"');
    expect(text('one')).toBe('v');
    expect(text('uid')).toBe('u1');
    expect(text('mem')).toBe('64');
    expect(text('cpu')).toBe('250');
    expect(text('cpu0')).toBe('1');
    expect(text('cpuLimit')).toBe('2');
  });
});

describe('token manager', () => {
  it('reuses a token until 80% of its life, then asks for a new one bound to the pod', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const asked: TokenRequest[] = [];
    const manager = new TokenManager(
      (_ns, _sa, body) => {
        asked.push(body);
        const seconds = body.spec?.expirationSeconds ?? 0;
        return Promise.resolve({
          metadata: {},
          spec: { ...body.spec, expirationSeconds: seconds },
          status: {
            token: `t${asked.length}`,
            expirationTimestamp: new Date(now + seconds * 1000).toISOString(),
          },
        });
      },
      () => now,
    );
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      spec: { serviceAccountName: 'sa' },
    };
    const src = { audience: 'vault', expirationSeconds: 600, path: 'token' };
    expect(await manager.token(pod, src)).toBe('t1');
    expect(asked[0]?.spec).toEqual({
      audiences: ['vault'],
      expirationSeconds: 600,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1' },
    });
    const start = now;
    expect(manager.refreshAt('u1')).toBe(start + 480_000);
    now = start + 479_000;
    expect(await manager.token(pod, src)).toBe('t1');
    now = start + 481_000;
    expect(await manager.token(pod, src)).toBe('t2');
    expect(asked).toHaveLength(2);
    manager.forget('u1');
    expect(manager.refreshAt('u1')).toBeUndefined();
  });

  it('keeps a still-valid token when a refresh fails, and says "failed to fetch token" otherwise', async () => {
    let now = 0;
    let fail = false;
    const manager = new TokenManager(
      (_ns, _sa, body) =>
        fail
          ? Promise.reject(new Error('forbidden'))
          : Promise.resolve({
              metadata: {},
              spec: body.spec ?? {},
              status: { token: 'ok', expirationTimestamp: new Date(now + 600_000).toISOString() },
            }),
      () => now,
    );
    const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u2' } };
    const src = { expirationSeconds: 600, path: 't' };
    expect(await manager.token(pod, src)).toBe('ok');
    fail = true;
    now = 500_000;
    expect(await manager.token(pod, src)).toBe('ok');
    now = 700_000;
    await expect(manager.token(pod, src)).rejects.toThrow('failed to fetch token: forbidden');
  });
});

describe('container mounts', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-mounts-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes sub paths, expands subPathExpr, keeps read-only kinds read-only, refuses escapes', async () => {
    const vol = join(dir, 'vol');
    await mkdir(vol);
    const volumes = new Map([
      ['v', { hostPath: vol, readOnly: false }],
      ['cfg', { hostPath: vol, readOnly: true }],
    ]);
    const mounts = await makeMounts(
      {
        name: 'c',
        volumeMounts: [
          { name: 'v', mountPath: '/a' },
          { name: 'v', mountPath: '/b', subPath: 'sub/dir', readOnly: true },
          { name: 'v', mountPath: '/e', subPathExpr: '$(POD)/logs' },
          { name: 'cfg', mountPath: '/cfg' },
        ],
      },
      volumes,
      new Map([['POD', 'web-1']]),
    );
    expect(mounts).toEqual([
      { containerPath: '/a', hostPath: vol, readonly: false },
      { containerPath: '/b', hostPath: join(vol, 'sub/dir'), readonly: true },
      { containerPath: '/e', hostPath: join(vol, 'web-1/logs'), readonly: false },
      { containerPath: '/cfg', hostPath: vol, readonly: true },
    ]);
    expect((await stat(join(vol, 'sub/dir'))).isDirectory()).toBe(true);

    await symlink('/etc', join(vol, 'escape'));
    await expect(
      makeMounts(
        { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x', subPath: 'escape' }] },
        volumes,
        new Map(),
      ),
    ).rejects.toThrow(MountConfigError);
    await expect(
      makeMounts(
        { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x', subPath: '../up' }] },
        volumes,
        new Map(),
      ),
    ).rejects.toThrow("must not contain '..'");
    await expect(
      makeMounts(
        { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x', subPathExpr: '$(NOPE)' }] },
        volumes,
        new Map(),
      ),
    ).rejects.toThrow('missing value for NOPE');
    expect(
      await makeMounts(
        { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/h', mountPropagation: 'HostToContainer' }] },
        volumes,
        new Map(),
      ),
    ).toEqual([
      { containerPath: '/h', hostPath: vol, readonly: false, propagation: 'PROPAGATION_HOST_TO_CONTAINER' },
    ]);
    await expect(
      makeMounts(
        { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/b', mountPropagation: 'Bidirectional' }] },
        volumes,
        new Map(),
      ),
    ).rejects.toThrow('Bidirectional mount propagation is available only to privileged containers');
    await expect(
      makeMounts({ name: 'c', volumeMounts: [{ name: 'zz', mountPath: '/x' }] }, volumes, new Map()),
    ).rejects.toThrow('cannot find volume "zz" to mount into container "c"');
  });
});
