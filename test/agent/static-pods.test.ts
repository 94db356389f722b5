/**
 * Static pods on a real node (containerd, server, agent; kubectl 1.33):
 * - from `staticPodPath` (a KubeletConfiguration given by `--config`): the pod runs and gets a
 *   mirror pod with kube's annotations, an owner reference to the Node, and the pod's status; a
 *   new file is picked up on its change, long before `fileCheckFrequency` (5m here); a deleted
 *   mirror comes back without touching the containers; a removed file stops the pod and its
 *   mirror goes;
 * - refused manifests (a Secret reference, a malformed file) get a clear log line and the other
 *   pods keep running; of two pods with one name, the first file's runs and the other gets a
 *   FailedValidation event, running once the first file goes;
 * - from `--manifest-url` with `--manifest-url-header`: the pod runs with an `http` mirror; a URL
 *   answering garbage or not at all is logged and changes nothing;
 * - pods submitted to the agent's HTTPS server (`PUT /manifests/<name>`) run with mirrors, are
 *   refused as static pods are (and when a pod's name is taken), and stop on `DELETE`;
 * - standalone (no `--kubeconfig`): static pods run, with no API server at all.
 */
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { DEFAULT_BRIDGE } from '../../src/agent/network/cni.js';
import {
  BUSYBOX_IMAGE,
  removeBridgeIfUnused,
  requireContainerd,
  startContainerd,
  type Containerd,
  unmountUnder,
} from '../support/containerd.js';

const enabled = requireContainerd();
const NODE = 'static-node-1';

function manifest(name: string, spec: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }],
      ...spec,
    },
  });
}

/** A request to the agent's HTTPS server (its self-signed certificate is not checked). */
function agentRequest(
  port: number,
  method: string,
  path: string,
  body?: string,
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, method, path, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Lines logged through console.error since the spy started, joined. */
function logged(spy: MockInstance): string {
  return spy.mock.calls.map((args) => args.map(String).join(' ')).join('\n');
}

describe.runIf(enabled)('static pods with an API server', () => {
  let node: AgentNode;
  let dir: string;
  let manifests: string;
  let url: Server;
  let urlMode: 'pod' | 'garbage' | 'hang' = 'pod';
  let errors: MockInstance;
  const k = (...args: string[]): Promise<string> => node.kubectl(...args);
  const get = async (name: string): Promise<Pod> =>
    JSON.parse(await k('get', 'pod', name, '-o', 'json')) as Pod;
  const running = async (name: string): Promise<Pod> => {
    await expect
      .poll(async () => (await get(name).catch(() => undefined))?.status?.phase, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe('Running');
    return get(name);
  };

  beforeAll(async () => {
    errors = vi.spyOn(console, 'error');
    dir = await mkdtemp(join(tmpdir(), 'capstan-static-'));
    manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await writeFile(join(manifests, 'web.yaml'), manifest('web'));
    url = createServer((req, res) => {
      if (req.headers['x-token'] !== 't1') return void res.writeHead(403).end('no token');
      if (urlMode === 'hang') return; // never answers
      res.end(urlMode === 'pod' ? manifest('urlpod') : '{"kind": "Pod", "metadata": [1, 2');
    });
    await new Promise<void>((r) => url.listen(0, '127.0.0.1', r));
    const config = join(dir, 'kubelet.yaml');
    await writeFile(
      config,
      [
        'apiVersion: kubelet.config.k8s.io/v1beta1',
        'kind: KubeletConfiguration',
        `staticPodPath: ${manifests}`,
        'fileCheckFrequency: 5m',
        'httpCheckFrequency: 1s',
        'authorization: {mode: AlwaysAllow}',
        'authentication: {anonymous: {enabled: true}}',
      ].join('\n'),
    );
    node = await startAgentNode({
      node: NODE,
      podCIDR: '10.244.171.0/24',
      agentArgs: [
        `--config=${config}`,
        `--manifest-url=http://127.0.0.1:${(url.address() as AddressInfo).port}/pods`,
        '--manifest-url-header=X-Token:t1',
      ],
    });
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
    url?.closeAllConnections();
    url?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    errors?.mockRestore();
  }, 120_000);

  it('runs a file static pod and mirrors it in the API server with kube’s annotations and owner', async () => {
    const mirror = await running(`web-${NODE}`);
    const a = mirror.metadata.annotations ?? {};
    expect(a['kubernetes.io/config.source']).toBe('file');
    expect(a['kubernetes.io/config.mirror']).toMatch(/^[0-9a-f]{32}$/);
    expect(a['kubernetes.io/config.hash']).toBe(a['kubernetes.io/config.mirror']);
    expect(Number.isNaN(Date.parse(a['kubernetes.io/config.seen'] ?? ''))).toBe(false);
    const nodeUid = await k('get', 'node', NODE, '-o', 'jsonpath={.metadata.uid}');
    expect(mirror.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true },
    ]);
    expect(mirror.spec?.nodeName).toBe(NODE);
    expect(mirror.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    expect(mirror.status?.podIP).toMatch(/^10\.244\.171\./);
  }, 90_000);

  it('picks up a new file on its change, long before fileCheckFrequency', async () => {
    await writeFile(join(manifests, 'second.yaml'), manifest('second'));
    await running(`second-${NODE}`);
  }, 90_000);

  it('runs the first of two static pods with one name (file order), with a FailedValidation event for the other', async () => {
    const twin = (which: string): string =>
      JSON.stringify({
        ...(JSON.parse(manifest('twin')) as Pod),
        metadata: { name: 'twin', labels: { which } },
      });
    await writeFile(join(manifests, 'twin-b.yaml'), twin('b'));
    await writeFile(join(manifests, 'twin-a.yaml'), twin('a'));
    const full = `twin-${NODE}`;
    const message = new RegExp(
      `^Error validating pod ${full}_default\\([0-9a-f]{32}\\) from file due to duplicate pod name "${full}", ignoring$`,
    );
    const events = async (): Promise<{ reason: string; message: string; type: string }[]> =>
      (
        JSON.parse(
          await k('get', 'events', '--field-selector', `involvedObject.name=${full}`, '-o', 'json'),
        ) as { items: { reason: string; message: string; type: string }[] }
      ).items;
    await expect
      .poll(
        async () =>
          (await events())
            .filter((e) => e.reason === 'FailedValidation')
            .map((e) => `${e.type} ${e.message}`),
        { timeout: 30_000 },
      )
      .toEqual([expect.stringMatching(/^Warning /)]);
    const [validation] = (await events()).filter((e) => e.reason === 'FailedValidation');
    expect(validation?.message).toMatch(message);
    const first = await running(full);
    expect(first.metadata.labels?.['which']).toBe('a');
    expect(logged(errors)).toMatch(
      /static pod default\/twin-static-node-1: Error validating pod .* due to duplicate pod name/,
    );
    expect(node.agent.pods().filter((p) => p.metadata.name === full)).toHaveLength(1);

    // The first file goes: the other pod, no longer a duplicate, runs in its place.
    await unlink(join(manifests, 'twin-a.yaml'));
    await expect
      .poll(async () => (await get(full).catch(() => undefined))?.metadata.labels?.['which'], {
        timeout: 60_000,
      })
      .toBe('b');
    await running(full);
    await unlink(join(manifests, 'twin-b.yaml'));
    await expect
      .poll(async () => (await k('get', 'pods', '-o', 'name')).split('\n'), {
        timeout: 30_000,
        interval: 500,
      })
      .not.toContain(`pod/${full}`);
  }, 150_000);

  it('refuses a static pod naming a Secret and a malformed file, with clear log lines, and keeps the others', async () => {
    const before = (await get(`web-${NODE}`)).status?.containerStatuses?.[0]?.containerID;
    await writeFile(
      join(manifests, 'secret.yaml'),
      manifest('secretive', {
        volumes: [{ name: 's', secret: { secretName: 'db' } }],
      }),
    );
    await writeFile(join(manifests, 'bad.yaml'), 'kind: Pod\nmetadata: {name: [unclosed\n');
    await expect
      .poll(() => logged(errors), { timeout: 20_000 })
      .toContain(
        `static pod manifest file ${join(manifests, 'secret.yaml')}: static pods may not reference secrets`,
      );
    await expect
      .poll(() => logged(errors), { timeout: 20_000 })
      .toContain(`could not process static pod manifest file ${join(manifests, 'bad.yaml')}:`);
    await expect(k('get', 'pod', `secretive-${NODE}`)).rejects.toThrow(/NotFound|not found/);
    const web = await get(`web-${NODE}`);
    expect(web.status?.phase).toBe('Running');
    expect(web.status?.containerStatuses?.[0]?.containerID).toBe(before);
    await unlink(join(manifests, 'secret.yaml'));
    await unlink(join(manifests, 'bad.yaml'));
  }, 60_000);

  it('makes a deleted mirror pod again, without touching the static pod’s containers', async () => {
    const old = await get(`web-${NODE}`);
    await k('delete', 'pod', `web-${NODE}`, '--wait=false');
    await expect
      .poll(async () => (await get(`web-${NODE}`).catch(() => undefined))?.metadata.uid, { timeout: 30_000 })
      .not.toBe(old.metadata.uid);
    const again = await running(`web-${NODE}`);
    expect(again.metadata.uid).toBeDefined();
    expect(again.status?.containerStatuses?.[0]?.containerID).toBe(
      old.status?.containerStatuses?.[0]?.containerID,
    );
    expect(again.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 60_000);

  it('runs a --manifest-url pod (with its header); garbage and silence are logged and change nothing', async () => {
    const mirror = await running(`urlpod-${NODE}`);
    expect(mirror.metadata.annotations?.['kubernetes.io/config.source']).toBe('http');
    const id = mirror.status?.containerStatuses?.[0]?.containerID;
    urlMode = 'garbage';
    await expect
      .poll(() => logged(errors), { timeout: 20_000 })
      .toMatch(/reading static pods from http:\/\/127\.0\.0\.1:\d+\/pods: /);
    urlMode = 'hang';
    await expect
      .poll(() => logged(errors), { timeout: 30_000, interval: 500 })
      .toContain('no answer within 10 s');
    const still = await get(`urlpod-${NODE}`);
    expect(still.status?.phase).toBe('Running');
    expect(still.status?.containerStatuses?.[0]?.containerID).toBe(id);
    urlMode = 'pod';
  }, 90_000);

  it('runs pods submitted to the agent’s HTTP server, refuses what kube refuses, and stops them on DELETE', async () => {
    const port = node.agent.port;
    const put = await agentRequest(port, 'PUT', '/manifests/extra', manifest('submitted'));
    expect(put.code, put.body).toBe(200);
    expect((JSON.parse(put.body) as { items: Pod[] }).items.map((p) => p.metadata.name)).toEqual([
      `submitted-${NODE}`,
    ]);
    const mirror = await running(`submitted-${NODE}`);
    expect(mirror.metadata.annotations?.['kubernetes.io/config.source']).toBe('http');
    const refused = await agentRequest(
      port,
      'PUT',
      '/manifests/bad',
      manifest('cm', { volumes: [{ name: 'v', configMap: { name: 'x' } }] }),
    );
    expect(refused).toEqual({ code: 400, body: 'static pods may not reference configmaps\n' });
    const twin = await agentRequest(port, 'PUT', '/manifests/twin', manifest('submitted'));
    expect(twin.code).toBe(400);
    expect(twin.body).toMatch(
      new RegExp(
        `^Error validating pod submitted-${NODE}_default\\(\\w+\\) from http due to duplicate pod name "submitted-${NODE}", ignoring\n$`,
      ),
    );
    expect(JSON.parse((await agentRequest(port, 'GET', '/manifests')).body)).toEqual({
      submissions: { extra: [`default/submitted-${NODE}`] },
    });
    expect((await agentRequest(port, 'DELETE', '/manifests/extra')).code).toBe(200);
    expect((await agentRequest(port, 'DELETE', '/manifests/extra')).code).toBe(404);
    await expect
      .poll(async () => (await k('get', 'pods', '-o', 'name')).split('\n'), {
        timeout: 30_000,
        interval: 500,
      })
      .not.toContain(`pod/submitted-${NODE}`);
  }, 90_000);

  it('stops a static pod whose file goes, and deletes its mirror', async () => {
    await unlink(join(manifests, 'second.yaml'));
    await expect
      .poll(async () => (await k('get', 'pods', '-o', 'name')).split('\n'), {
        timeout: 30_000,
        interval: 500,
      })
      .not.toContain(`pod/second-${NODE}`);
    await expect
      .poll(() => node.agent.pods().some((p) => p.metadata.name === `second-${NODE}`), { timeout: 30_000 })
      .toBe(false);
  }, 60_000);
});

describe.runIf(enabled)('static pods standalone (no --kubeconfig)', () => {
  let ctrd: Containerd;
  let dir: string;
  let agent: Agent | undefined;

  beforeAll(async () => {
    ctrd = await startContainerd();
    dir = await mkdtemp(join(tmpdir(), 'capstan-standalone-'));
    await mkdir(join(dir, 'manifests'));
    await writeFile(join(dir, 'manifests', 'solo.json'), manifest('solo'));
    await writeFile(
      join(dir, 'kubelet.yaml'),
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: ${join(dir, 'manifests')}\n`,
    );
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await ctrd?.stop();
    await removeBridgeIfUnused(DEFAULT_BRIDGE);
    if (dir) {
      await unmountUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('runs the static pods with no API server', async () => {
    agent = new Agent(
      resolveConfig(
        agentFlagSet().parse([
          `--config=${join(dir, 'kubelet.yaml')}`,
          '--hostname-override=solo-node',
          `--container-runtime-endpoint=${ctrd.endpoint}`,
          `--root-dir=${join(dir, 'root')}`,
          `--pod-logs-dir=${join(dir, 'logs')}`,
          `--cni-conf-dir=${ctrd.cniConfDir}`,
          `--cgroup-root=${ctrd.cgroupParent}`,
          '--pod-cidr=10.244.172.0/24',
          '--enable-server=false',
          '--healthz-port=0',
          '--node-ip=127.0.0.1',
        ]),
      ),
    );
    await agent.start();
    await expect
      .poll(() => agent?.pods().find((p) => p.metadata.name === 'solo-solo-node')?.status?.phase, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe('Running');
    const pod = agent.pods().find((p) => p.metadata.name === 'solo-solo-node');
    expect(pod?.status?.podIP).toMatch(/^10\.244\.172\./);
    expect(pod?.metadata.annotations?.['kubernetes.io/config.source']).toBe('file');
  }, 90_000);
});
