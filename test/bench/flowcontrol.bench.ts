/**
 * The per-request cost of API Priority and Fairness, beside the max-in-flight filter it replaces
 * and beside the decode of one stored 1 KiB ConfigMap (a floor for what a GET costs anyway):
 * classification, the two response headers, taking and giving back a seat. `system:masters`
 * matches the first schema (exempt); an ordinary user walks the schemas down to global-default
 * and takes a seat of it.
 *
 * Run: npx vitest bench --run test/bench/flowcontrol.bench.ts
 */
import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bench, describe } from 'vitest';
import { decodeStored, encodeForStorage } from '../../src/api/object.js';
import { FlowControl } from '../../src/flowcontrol/dispatcher.js';
import { parseRequestInfo } from '../../src/http/request-info.js';
import { InflightLimiter } from '../../src/server/inflight.js';

const OPTS = { time: 300, warmupTime: 100 };

const info = parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/cm-1', {});
if (info === undefined) throw new Error('unparsable path');

function exchange(
  name: string,
  groups: string[],
): { request: FastifyRequest; reply: FastifyReply; raw: EventEmitter } {
  const raw = Object.assign(new EventEmitter(), { setHeader: () => undefined });
  const reply = { raw, header: () => reply } as unknown as FastifyReply;
  const request = {
    requestInfo: info,
    user: { name, uid: '', groups, extra: {} },
  } as unknown as FastifyRequest;
  return { request, reply, raw };
}

const flowControl = new FlowControl({
  serverConcurrencyLimit: 600,
  queueWaitMs: 15_000,
  isLongRunning: () => false,
});
const limiter = new InflightLimiter({ readOnly: 400, mutating: 200, isLongRunning: () => false });
const admin = exchange('admin', ['system:masters', 'system:authenticated']);
const alice = exchange('alice', ['system:authenticated']);
const stored = encodeForStorage({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm-1', namespace: 'default', uid: '6f1d3c2a-0000-4000-8000-000000000000' },
  data: { payload: 'x'.repeat(1024) },
});

function once(step: (r: FastifyRequest, p: FastifyReply) => unknown, x: ReturnType<typeof exchange>): void {
  void step(x.request, x.reply);
  x.raw.emit('close');
}

describe('flow control per request', () => {
  bench('APF, system:masters (exempt)', () => once(flowControl.admit, admin), OPTS);
  bench('APF, ordinary user (global-default seat)', () => once(flowControl.admit, alice), OPTS);
  bench('max-in-flight, ordinary user', () => once(limiter.admit, alice), OPTS);
  bench('decode one stored 1 KiB ConfigMap', () => void decodeStored(stored, 7n), OPTS);
});
