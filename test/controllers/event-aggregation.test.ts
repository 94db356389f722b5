/**
 * kube's aggregation of similar events in front of the controllers' recorders
 * (src/controller-manager/events.ts): 10 distinct notes of one kind of event are written as they
 * are, later ones as one combined note (which the recorder turns into a series); a new window,
 * another object or another reason starts afresh; the remembered keys are bounded. Then kube's
 * spam filter: 25 events per object and type, then one per 5 minutes, whatever the reason.
 */
import { describe, expect, it } from 'vitest';
import type { TypedObject } from '../../src/client/index.js';
import type { EventSink } from '../../src/controllers/context.js';
import {
  AGGREGATE_MAX_EVENTS,
  AGGREGATE_MAX_KEYS,
  AGGREGATE_WINDOW_MS,
  ObjectSpamFilter,
  SPAM_BURST,
  SPAM_MAX_KEYS,
  SPAM_REFILL_MS,
  SimilarEventAggregator,
} from '../../src/controller-manager/events.js';

interface Written {
  name: string | undefined;
  reason: string;
  note: string;
}

function setup(): { agg: SimilarEventAggregator; written: Written[]; clock: { now: number } } {
  const written: Written[] = [];
  const sink: EventSink = {
    event: (regarding, _type, reason, _action, note) =>
      written.push({ name: regarding.metadata?.name, reason, note }),
  };
  const clock = { now: 1_000_000 };
  return { agg: new SimilarEventAggregator(sink, () => clock.now), written, clock };
}

const rs = (name: string): TypedObject => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
});

describe('similar events', () => {
  it('writes 10 distinct notes, then one combined note for all later ones', () => {
    const { agg, written } = setup();
    for (let i = 0; i < 25; i++)
      agg.event(rs('web'), 'Normal', 'SuccessfulCreate', 'Create', `Created pod: p${i}`);
    expect(written.slice(0, AGGREGATE_MAX_EVENTS).map((w) => w.note)).toEqual(
      Array.from({ length: AGGREGATE_MAX_EVENTS }, (_, i) => `Created pod: p${i}`),
    );
    const later = new Set(written.slice(AGGREGATE_MAX_EVENTS).map((w) => w.note));
    expect([...later]).toEqual(['(combined from similar events): Created pod: p10']);
    expect(written).toHaveLength(25);
  });

  it('passes a repeated note as it is (the recorder makes it a series)', () => {
    const { agg, written } = setup();
    for (let i = 0; i < 10; i++)
      agg.event(rs('web'), 'Normal', 'SuccessfulCreate', 'Create', `Created pod: p${i}`);
    agg.event(rs('web'), 'Normal', 'SuccessfulCreate', 'Create', 'Created pod: p3');
    expect(written.at(-1)?.note).toBe('Created pod: p3');
  });

  it('counts per object and reason, and starts afresh after the window', () => {
    const { agg, written, clock } = setup();
    for (let i = 0; i < 11; i++) agg.event(rs('a'), 'Normal', 'SuccessfulCreate', 'Create', `n${i}`);
    agg.event(rs('b'), 'Normal', 'SuccessfulCreate', 'Create', 'n10');
    agg.event(rs('a'), 'Normal', 'SuccessfulDelete', 'Delete', 'n10');
    expect(written.slice(-3).map((w) => w.note)).toEqual([
      '(combined from similar events): n10',
      'n10',
      'n10',
    ]);
    clock.now += AGGREGATE_WINDOW_MS + 1;
    agg.event(rs('a'), 'Normal', 'SuccessfulCreate', 'Create', 'n11');
    expect(written.at(-1)?.note).toBe('n11');
  });

  it('forgets the least recently used key beyond its bound', () => {
    const { agg, written } = setup();
    for (let i = 0; i < 11; i++) agg.event(rs('first'), 'Normal', 'R', 'A', `n${i}`);
    for (let k = 0; k < AGGREGATE_MAX_KEYS; k++) agg.event(rs(`o${k}`), 'Normal', 'R', 'A', 'x');
    // `first` was evicted: its next note is written as it is again.
    agg.event(rs('first'), 'Normal', 'R', 'A', 'n99');
    expect(written.at(-1)?.note).toBe('n99');
  });
});

describe('the spam filter', () => {
  function filtered(): { filter: ObjectSpamFilter; written: Written[]; clock: { now: number } } {
    const written: Written[] = [];
    const sink: EventSink = {
      event: (regarding, _type, reason, _action, note) =>
        written.push({ name: regarding.metadata?.name, reason, note }),
    };
    const clock = { now: 1_000_000 };
    return { filter: new ObjectSpamFilter(sink, () => clock.now), written, clock };
  }

  it("lets 25 of one object's events through, whatever their reason, then one per 5 minutes", () => {
    const { filter, written, clock } = filtered();
    for (let i = 0; i < 30; i++) filter.event(rs('web'), 'Normal', `Reason${i}`, 'A', `n${i}`);
    expect(written).toHaveLength(SPAM_BURST);
    filter.event(rs('web'), 'Warning', 'Failed', 'A', 'another type has its own allowance');
    expect(written).toHaveLength(SPAM_BURST + 1);
    clock.now += SPAM_REFILL_MS - 1;
    filter.event(rs('web'), 'Normal', 'Late', 'A', 'still none');
    expect(written).toHaveLength(SPAM_BURST + 1);
    clock.now += 1;
    filter.event(rs('web'), 'Normal', 'Later', 'A', 'one more');
    filter.event(rs('web'), 'Normal', 'Later', 'A', 'and no other');
    expect(written.map((w) => w.note).slice(-2)).toEqual(['another type has its own allowance', 'one more']);
  });

  it('counts each object apart, and forgets the least recently used beyond its bound', () => {
    const { filter, written } = filtered();
    for (let k = 0; k < 1200; k++) filter.event(rs(`o${k}`), 'Normal', 'R', 'A', 'x');
    expect(written).toHaveLength(1200);
    for (let i = 0; i < SPAM_BURST + 1; i++) filter.event(rs('first'), 'Normal', 'R', 'A', `n${i}`);
    expect(written).toHaveLength(1200 + SPAM_BURST);
    for (let k = 0; k < SPAM_MAX_KEYS; k++) filter.event(rs(`p${k}`), 'Normal', 'R', 'A', 'x');
    // `first` was evicted: it has a full allowance again.
    filter.event(rs('first'), 'Normal', 'R', 'A', 'again');
    expect(written.at(-1)?.note).toBe('again');
  });
});
