/**
 * The probe worker's rules with fake timers and a scripted probe: the first probe at start
 * plus initialDelaySeconds, then every periodSeconds; thresholds in a row; errors thrown away;
 * liveness on hold after a failure until the next container; startup gating the others.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Container, Pod, Probe } from '../../src/api/types/core-v1.js';
import type { ProbeType } from '../../src/agent/probe/prober.js';
import { ProbeWorker } from '../../src/agent/probe/worker.js';

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u' } };

function make(type: ProbeType, probe: Probe, script: (boolean | undefined)[], started = () => true) {
  const key =
    type === 'liveness' ? 'livenessProbe' : type === 'readiness' ? 'readinessProbe' : 'startupProbe';
  const container: Container = { name: 'c', [key]: probe };
  const runs: number[] = [];
  const changes: string[] = [];
  const w = new ProbeWorker(type, pod, container, {
    run: () => {
      runs.push(Date.now());
      return Promise.resolve(script.shift());
    },
    started: () => started(),
    changed: (x) => changes.push(x.resultFor(x.target?.id ?? '') ?? '?'),
  });
  return { w, runs, changes };
}

describe('probe worker', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(100_000);
  });
  afterEach(() => vi.useRealTimers());

  it('waits the initial delay, then probes every period; readiness needs successThreshold in a row', async () => {
    const { w, runs, changes } = make(
      'readiness',
      { initialDelaySeconds: 5, periodSeconds: 2, successThreshold: 2, failureThreshold: 1 },
      [true, undefined, true, false],
    );
    w.observe({ id: 'a', running: true, startedAt: 100_000 });
    expect(w.resultFor('a')).toBe('failure');
    await vi.advanceTimersByTimeAsync(4_999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([105_000]);
    expect(w.resultFor('a')).toBe('failure'); // one success of two
    await vi.advanceTimersByTimeAsync(2_000); // errored: thrown away, the run goes on
    await vi.advanceTimersByTimeAsync(2_000);
    expect(w.resultFor('a')).toBe('success');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(w.resultFor('a')).toBe('failure');
    expect(runs).toEqual([105_000, 107_000, 109_000, 111_000]);
    expect(changes).toEqual(['success', 'failure']);
    w.stop();
  });

  it('holds liveness after failureThreshold failures until a new container', async () => {
    const { w, runs, changes } = make('liveness', { periodSeconds: 1, failureThreshold: 2 }, [
      false,
      false,
      true,
    ]);
    w.observe({ id: 'a', running: true, startedAt: 100_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.resultFor('a')).toBe('success');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(w.resultFor('a')).toBe('failure');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toHaveLength(2); // on hold
    w.observe({ id: 'b', running: true, startedAt: Date.now() });
    expect(w.resultFor('b')).toBe('success');
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toHaveLength(3);
    expect(changes).toEqual(['failure']);
    w.stop();
  });

  it('skips liveness and readiness until started, and stops the startup probe once it passed', async () => {
    let started = false;
    const r = make('readiness', { periodSeconds: 10 }, [true], () => started);
    const s = make('startup', { periodSeconds: 1, failureThreshold: 5 }, [false, true], () => started);
    r.w.observe({ id: 'a', running: true, startedAt: 100_000 });
    s.w.observe({ id: 'a', running: true, startedAt: 100_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(r.runs).toEqual([]);
    expect(s.w.resultFor('a')).toBe('success');
    started = true;
    r.w.trigger();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.runs).toHaveLength(1);
    expect(r.w.resultFor('a')).toBe('success');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(s.runs).toHaveLength(2);
    r.w.stop();
    s.w.stop();
  });
});
