/**
 * kube's aggregation of similar events in front of the controllers' recorders
 * (src/controller-manager/events.ts): 10 distinct notes of one kind of event are written as they
 * are, later ones as one combined note (which the recorder turns into a series); a new window,
 * another object or another reason starts afresh; the remembered keys are bounded.
 */
import { describe, expect, it } from 'vitest';
import type { TypedObject } from '../../src/client/index.js';
import type { EventSink } from '../../src/controllers/context.js';
import {
  AGGREGATE_MAX_EVENTS,
  AGGREGATE_MAX_KEYS,
  AGGREGATE_WINDOW_MS,
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
