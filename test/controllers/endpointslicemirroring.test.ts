/**
 * The EndpointSlice mirroring controller with kubectl 1.33: the Endpoints of a Service without a
 * selector (applied with kubectl) are mirrored into EndpointSlices managed by
 * `endpointslicemirroring-controller.k8s.io`, one per address family and port list, with the
 * Endpoints' labels and annotations (not kubectl's last-applied configuration), readiness, node
 * names, hostnames and target references, owned by the Endpoints; changes are mirrored into the
 * same slice; addresses over `--mirroring-max-endpoints-per-subset` are skipped with kube's
 * event; the mirror goes away with the skip-mirror label, a selector, or the Service.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoints, Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { ENDPOINTS, EVENTS, SERVICES } from '../../src/client/index.js';
import { endpointSliceMirroringController } from '../../src/controllers/endpointslicemirroring/index.js';
import { canonicalIP } from '../../src/controllers/endpointslicemirroring/desired.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

const MANAGED = 'endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io';
let env: InfraEnv;

async function apply(name: string, yaml: string): Promise<void> {
  const file = join(env.server.dataDir, `${name}.yaml`);
  await writeFile(file, yaml);
  const r = await env.kubectl('apply', '-f', file);
  expect(r.code, r.stderr).toBe(0);
}

/** The mirrored slices of `service`, read with kubectl. */
async function slices(service: string): Promise<EndpointSlice[]> {
  const r = await env.kubectl(
    'get',
    'endpointslices',
    '-n',
    'default',
    '-l',
    `${MANAGED},kubernetes.io/service-name=${service}`,
    '-o',
    'json',
  );
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { items: EndpointSlice[] }).items;
}

async function slicesUntil(service: string, ok: (s: EndpointSlice[]) => boolean): Promise<EndpointSlice[]> {
  return until(`slices of ${service}`, async () => {
    const s = await slices(service);
    return ok(s) ? s : undefined;
  });
}

function endpointsYaml(name: string, extra = ''): string {
  return `apiVersion: v1
kind: Endpoints
metadata:
  name: ${name}
  namespace: default
  labels: {team: db${extra}}
  annotations: {note: external}
subsets:
- addresses:
  - ip: 10.0.0.1
    nodeName: node-a
    hostname: db-0
  - ip: "fd00::1"
  notReadyAddresses:
  - ip: 10.0.0.2
    targetRef: {kind: Pod, name: db-1, namespace: default}
  ports:
  - name: sql
    port: 5432
    protocol: TCP
`;
}

function serviceYaml(name: string): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec:
  ports: [{name: sql, port: 5432, protocol: TCP}]
`;
}

beforeAll(async () => {
  env = await startInfraEnv([endpointSliceMirroringController], ['--mirroring-max-endpoints-per-subset=3']);
}, 60_000);
afterAll(async () => env?.close());

describe('endpointslicemirroring', () => {
  it('reads IPs as Go does', () => {
    expect(canonicalIP('010.000.000.001')).toEqual({ text: '10.0.0.1', type: 'IPv4' });
    expect(canonicalIP('FD00:0:0:0:0:0:0:1')).toEqual({ text: 'fd00::1', type: 'IPv6' });
    expect(canonicalIP('::ffff:1.2.3.4')).toEqual({ text: '1.2.3.4', type: 'IPv4' });
    expect(canonicalIP('example.com')).toBeUndefined();
  });

  it("mirrors a selector-less Service's Endpoints, per address family", async () => {
    await apply('db-svc', serviceYaml('db'));
    await apply('db-ep', endpointsYaml('db'));
    const got = await slicesUntil('db', (s) => s.length === 2);
    const ep = await env.client.resource<Endpoints>(ENDPOINTS).get('db', { namespace: 'default' });
    const v4 = got.find((s) => s.addressType === 'IPv4');
    const v6 = got.find((s) => s.addressType === 'IPv6');
    expect(v4?.metadata.generateName).toBe('db-');
    expect(v4?.metadata.labels).toEqual({
      team: 'db',
      'kubernetes.io/service-name': 'db',
      'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
    });
    expect(v4?.metadata.annotations).toEqual({ note: 'external' });
    expect(v4?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        name: 'db',
        uid: ep.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(v4?.ports).toEqual([{ name: 'sql', port: 5432, protocol: 'TCP' }]);
    const byIp = new Map((v4?.endpoints ?? []).map((e) => [e.addresses?.[0], e]));
    expect(byIp.get('10.0.0.1')).toEqual({
      addresses: ['10.0.0.1'],
      conditions: { ready: true },
      nodeName: 'node-a',
      hostname: 'db-0',
    });
    expect(byIp.get('10.0.0.2')).toEqual({
      addresses: ['10.0.0.2'],
      conditions: { ready: false },
      targetRef: { kind: 'Pod', name: 'db-1', namespace: 'default' },
    });
    expect(v6?.endpoints).toEqual([{ addresses: ['fd00::1'], conditions: { ready: true } }]);
    const shown = await env.kubectl(
      'get',
      'endpointslices',
      '-n',
      'default',
      '-l',
      'kubernetes.io/service-name=db',
    );
    expect(shown.stdout).toContain('5432');
    expect(shown.stdout).toContain('10.0.0.1,10.0.0.2');
  });

  it('mirrors changes into the same slice and drops a family no longer used', async () => {
    const before = await slices('db');
    const v4Name = before.find((s) => s.addressType === 'IPv4')?.metadata.name;
    await apply(
      'db-ep',
      endpointsYaml('db', ', tier: data')
        .replace('  - ip: "fd00::1"\n', '  - ip: 10.0.0.3\n')
        .replace('annotations: {note: external}', 'annotations: {note: changed}'),
    );
    const after = await slicesUntil(
      'db',
      (s) =>
        s.length === 1 &&
        (s[0]?.endpoints ?? []).length === 3 &&
        s[0]?.metadata.annotations?.['note'] === 'changed',
    );
    expect(after[0]?.metadata.name).toBe(v4Name);
    expect(after[0]?.metadata.labels?.['tier']).toBe('data');
  });

  it('skips addresses over --mirroring-max-endpoints-per-subset with an event', async () => {
    await apply('big-svc', serviceYaml('big'));
    const ips = [1, 2, 3, 4, 5].map((i) => `  - ip: 10.1.0.${i}\n`).join('');
    await apply(
      'big-ep',
      `apiVersion: v1\nkind: Endpoints\nmetadata: {name: big, namespace: default}\nsubsets:\n- addresses:\n${ips}  ports: [{port: 80}]\n`,
    );
    const got = await slicesUntil('big', (s) => s.length === 1);
    expect(got[0]?.endpoints).toHaveLength(3);
    expect(got[0]?.ports).toEqual([{ name: '', port: 80, protocol: 'TCP' }]);
    const note = await until('the event', async () => {
      const list = await env.client.resource<Event>(EVENTS).list({ namespace: 'default' });
      return list.items.find((e) => e.regarding?.name === 'big' && e.reason === 'TooManyAddressesToMirror');
    });
    expect(note).toMatchObject({
      type: 'Warning',
      regarding: { kind: 'Endpoints', name: 'big' },
      note: 'A max of 3 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped',
    });
  });

  it('removes the mirror for the skip-mirror label, a selector, or a deleted Service', async () => {
    const r = await env.kubectl(
      'label',
      'endpoints',
      'big',
      '-n',
      'default',
      'endpointslice.kubernetes.io/skip-mirror=true',
    );
    expect(r.code, r.stderr).toBe(0);
    await slicesUntil('big', (s) => s.length === 0);

    await apply('sel-svc', serviceYaml('sel'));
    await apply('sel-ep', endpointsYaml('sel'));
    await slicesUntil('sel', (s) => s.length === 2);
    const services = env.client.resource<Service>(SERVICES);
    const svc = await services.get('sel', { namespace: 'default' });
    await services.update({ ...svc, spec: { ...svc.spec, selector: { app: 'sel' } } });
    await slicesUntil('sel', (s) => s.length === 0);

    const d = await env.kubectl('delete', 'service', 'db', '-n', 'default');
    expect(d.code, d.stderr).toBe(0);
    await slicesUntil('db', (s) => s.length === 0);
    expect(env.errors).toEqual([]);
  });
});
