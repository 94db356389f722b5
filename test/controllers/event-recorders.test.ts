/**
 * The controllers' recorders against a real server: beyond kube's aggregation and per-object spam
 * filter, only the controller client's QPS limits events, as in kube-controller-manager. Many
 * objects changing at once each get their event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event } from '../../src/api/types/events-v1.js';
import { Client, EVENTS, NAMESPACES, loadKubeconfig, type TypedObject } from '../../src/client/index.js';
import { EventRecorders } from '../../src/controller-manager/events.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'recorders';
const OBJECTS = 1200;

describe("the controllers' event recorders", () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer();
    client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
    await client.resource(NAMESPACES).create({ metadata: { name: NS } });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it(`write an event for each of ${OBJECTS} objects recorded at once`, async () => {
    const errors: string[] = [];
    const recorders = new EventRecorders((m, e) => errors.push(`${m}: ${String(e)}`));
    const sink = recorders.for(client, 'replicaset-controller');
    for (let i = 0; i < OBJECTS; i++) {
      const rs: TypedObject = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: `rs-${i}`, namespace: NS, uid: `uid-${i}` },
      };
      sink.event(rs, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: rs-${i}-abcde`);
    }
    await recorders.close();
    expect(errors).toEqual([]);
    const events = (await client.resource<Event>(EVENTS).list({ namespace: NS })).items;
    expect(new Set(events.map((e) => e.regarding?.name)).size).toBe(OBJECTS);
  }, 60_000);
});
