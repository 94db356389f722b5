/**
 * Batch mode in front of a log that writes in the background: while one write is out, the
 * events of the requests still being served pile up, and the next batch must take all of them.
 * A drain that kept its first batch size wrote a dozen events per write under load and dropped
 * events once the buffer filled.
 */
import { describe, expect, it } from 'vitest';
import type { AuditBackend } from '../../src/audit/backend.js';
import { BufferedBackend } from '../../src/audit/buffered.js';
import type { AuditEvent } from '../../src/audit/event.js';

const event = (i: number): AuditEvent =>
  ({ kind: 'Event', auditID: `e${i}`, stage: 'ResponseComplete' }) as unknown as AuditEvent;

describe('BufferedBackend over a background writer', () => {
  it('takes everything queued during a write into the next batch, and drops nothing', async () => {
    const batches: number[] = [];
    const written: string[] = [];
    const writer: AuditBackend = {
      name: 'slow-log',
      coalesces: true,
      processEvents(events) {
        batches.push(events.length);
        for (const e of events) written.push(e.auditID);
        // A write that takes 30 ms on another thread.
        return new Promise((resolve) => setTimeout(() => resolve(true), 30));
      },
      shutdown: () => Promise.resolve(),
    };
    const log: string[] = [];
    const buffered = new BufferedBackend(
      writer,
      {
        bufferSize: 1000,
        maxBatchSize: 1,
        maxBatchWaitMs: 0,
        throttleEnable: false,
        throttleQps: 0,
        throttleBurst: 0,
        asyncDelegate: false,
      },
      (message) => log.push(message),
    );
    // 20 events a millisecond (timers permitting) for 300 ms: a few thousand events, several
    // times the buffer, and up to ~600 of them arrive during each 30 ms write.
    let n = 0;
    const until = performance.now() + 300;
    while (performance.now() < until) {
      for (let i = 0; i < 20; i++) void buffered.processEvents([event(n++)]);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await buffered.shutdown();
    expect(log).toEqual([]);
    expect(written).toHaveLength(n);
    expect(written[n - 1]).toBe(`e${n - 1}`);
    // Some batch held what piled up during a write: more than one burst of 20.
    expect(Math.max(...batches)).toBeGreaterThan(20);
  });
});
