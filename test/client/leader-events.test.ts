/** Leader election on Leases and the event recorder's series aggregation, against a real Capstan. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import type { ConfigMap } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import {
  CONFIG_MAPS,
  Client,
  EVENTS,
  EventRecorder,
  LEASES,
  LeaderElector,
  NAMESPACES,
  loadKubeconfig,
} from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
const NS = 'client-le';

beforeAll(async () => {
  server = await startTestServer();
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
  await client.resource(NAMESPACES).create({ metadata: { name: NS } });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

/** Resolves when `pred` holds (checked every 50 ms), or fails after 20 s. */
async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Candidate {
  elector: LeaderElector;
  stop: AbortController;
  done: Promise<void>;
  log: string[];
}

function candidate(name: string, identity: string, c: Client = client, releaseOnCancel = false): Candidate {
  const log: string[] = [];
  const stop = new AbortController();
  const elector = new LeaderElector({
    client: c,
    namespace: NS,
    name,
    identity,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 200,
    releaseOnCancel,
    onStartedLeading: (signal) => {
      log.push('started');
      signal.addEventListener('abort', () => log.push('signal aborted'));
    },
    onStoppedLeading: () => log.push('stopped'),
    log: () => undefined,
  });
  return { elector, stop, log, done: elector.run(stop.signal) };
}

describe('LeaderElector', () => {
  it('kube defaults are 15 s / 10 s / 2 s and bad combinations are refused', () => {
    const base = {
      client,
      namespace: NS,
      name: 'x',
      identity: 'i',
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    expect(() => new LeaderElector(base)).not.toThrow();
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 5000, renewDeadlineMs: 5000 })).toThrow(
      RangeError,
    );
  });

  it('one leads; the other takes over when the leader stops renewing, after the lease duration', async () => {
    const a = candidate('lead-expire', 'a');
    await until(() => a.elector.isLeader(), 'a to lead');
    const b = candidate('lead-expire', 'b');
    const leases = client.resource<Lease>(LEASES);
    let lease = await leases.get('lead-expire', { namespace: NS });
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(lease.spec?.leaseDurationSeconds).toBe(2);
    expect(lease.spec?.leaseTransitions).toBe(0);
    expect(lease.spec?.acquireTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const acquired = lease.spec?.acquireTime;
    // a keeps renewing: renewTime moves, acquireTime does not, b stays a follower.
    await new Promise((r) => setTimeout(r, 2500));
    lease = await leases.get('lead-expire', { namespace: NS });
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(lease.spec?.acquireTime).toBe(acquired);
    expect(lease.spec?.renewTime).not.toBe(acquired);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.getLeader()).toBe('a');
    // a stops without releasing: b must wait for the lease to expire, then takes it.
    const stoppedAt = Date.now();
    a.stop.abort();
    await a.done;
    expect(a.log).toEqual(['started', 'signal aborted', 'stopped']);
    await until(() => b.elector.isLeader(), 'b to take over');
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1000);
    lease = await leases.get('lead-expire', { namespace: NS });
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);
    expect(lease.spec?.acquireTime).not.toBe(acquired);
    b.stop.abort();
    await b.done;
  });

  it('releases on cancel so a follower takes over, and a leader that cannot renew steps down', async () => {
    const a = candidate('lead-release', 'a', client, true);
    await until(() => a.elector.isLeader(), 'a to lead');
    const b = candidate('lead-release', 'b');
    await until(() => b.elector.getLeader() === 'a', 'b to see a');
    a.stop.abort();
    await a.done;
    expect(
      (await client.resource<Lease>(LEASES).get('lead-release', { namespace: NS })).spec?.holderIdentity,
    ).not.toBe('a');
    await until(() => b.elector.isLeader(), 'b to take over');
    // Someone else overwrites the lease: b cannot renew (its view is stale) and steps down.
    const leases = client.resource<Lease>(LEASES);
    const lease = await leases.get('lead-release', { namespace: NS });
    const thief = setInterval(() => {
      void leases
        .get('lead-release', { namespace: NS })
        .then((l) =>
          leases.update({
            ...l,
            spec: {
              ...l.spec,
              holderIdentity: 'c',
              renewTime: new Date().toISOString().replace('Z', '000Z'),
            },
          }),
        )
        .catch(() => undefined);
    }, 50);
    try {
      expect(lease.spec?.leaseTransitions).toBe(1);
      await until(() => b.log.includes('stopped'), 'b to step down');
      await b.done;
      expect(b.elector.isLeader()).toBe(false);
      expect(b.log).toEqual(['started', 'signal aborted', 'stopped']);
    } finally {
      clearInterval(thief);
    }
  });
});

describe('EventRecorder', () => {
  it('writes events.k8s.io/v1 Events and folds repeats into one object with a series', async () => {
    const cm = await client
      .resource<ConfigMap>(CONFIG_MAPS)
      .create({ metadata: { name: 'subject', namespace: NS } });
    const rec = new EventRecorder(client, {
      component: 'test-controller',
      host: 'node-1',
      seriesFlushMs: 100_000,
    });
    for (let i = 0; i < 4; i++)
      rec.event({ ...cm, kind: 'ConfigMap', apiVersion: 'v1' }, 'Normal', 'Synced', 'Sync', 'synced it');
    rec.event({ ...cm, kind: 'ConfigMap', apiVersion: 'v1' }, 'Warning', 'Failed', 'Sync', 'could not');
    await rec.close();
    const events = (await client.resource<Event>(EVENTS).list({ namespace: NS })).items.filter(
      (e) => e.regarding?.name === 'subject',
    );
    expect(events).toHaveLength(2);
    const synced = events.find((e) => e.reason === 'Synced')!;
    expect(synced.metadata.name).toMatch(/^subject\.[0-9a-f]+$/);
    expect(synced.series?.count).toBe(4);
    expect(synced.series?.lastObservedTime).toBeTruthy();
    expect(synced.reportingController).toBe('test-controller');
    expect(synced.reportingInstance).toBe('node-1');
    expect(synced.regarding).toMatchObject({
      kind: 'ConfigMap',
      name: 'subject',
      namespace: NS,
      uid: cm.metadata.uid,
    });
    expect(synced.type).toBe('Normal');
    expect(synced.action).toBe('Sync');
    const failed = events.find((e) => e.reason === 'Failed')!;
    expect(failed.series).toBeUndefined();
    expect(failed.type).toBe('Warning');
    expect(failed.note).toBe('could not');
  });

  it('drops events past its queue, and logs the drops as counts, not a line each', async () => {
    const cm = await client
      .resource<ConfigMap>(CONFIG_MAPS)
      .create({ metadata: { name: 'burst', namespace: NS } });
    const lines: string[] = [];
    const rec = new EventRecorder(client, {
      component: 'burst-controller',
      qps: 1000,
      burst: 1,
      maxQueued: 100,
      log: (m) => lines.push(m),
    });
    const subject = { ...cm, kind: 'ConfigMap', apiVersion: 'v1' };
    // Recorded in one go: the first is written at once (its token is there), as are any whose
    // token is refilled by then (a millisecond each), 100 wait, the rest are dropped.
    for (let i = 0; i < 1500; i++) rec.event(subject, 'Normal', 'Burst', 'Burst', `event ${i}`);
    expect(lines).toEqual(['event recorder burst-controller: queue full, dropped 1 event(s)']);
    await rec.close();
    expect(lines).toHaveLength(2);
    const dropped = 1 + Number(/dropped (\d+) event/.exec(lines[1] ?? '')?.[1]);
    const written = (await client.resource<Event>(EVENTS).list({ namespace: NS })).items.filter(
      (e) => e.regarding?.name === 'burst',
    );
    expect(written.length).toBeGreaterThanOrEqual(101);
    expect(written.length).toBeLessThan(200);
    expect(written.length + dropped).toBe(1500);
  }, 60_000);
});
