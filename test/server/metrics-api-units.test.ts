/**
 * `metrics.k8s.io`'s pieces without agents: reading `/metrics/resource`, the rates and windows
 * metrics-server computes from two scrapes, kube's quantity forms, and the on-demand scraper's
 * refresh rules (with a fake clock and a fake agent).
 */
import { describe, expect, it } from 'vitest';
import { parseResourceMetrics } from '../../src/metrics-api/parse.js';
import { MAX_WINDOW_MS, RESOLUTION_MS, ResourceScraper } from '../../src/metrics-api/scraper.js';
import { cpuQuantity, cpuRate, memoryQuantity, nodeUsage, podUsage } from '../../src/metrics-api/usage.js';

/** A `/metrics/resource` answer with the given cumulative CPU seconds and sample time. */
function body(opts: { node: number; c: number; d?: number; at: number; start?: number }): string {
  const lines = [
    '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
    '# TYPE node_cpu_usage_seconds_total counter',
    `node_cpu_usage_seconds_total ${opts.node} ${opts.at}`,
    `node_memory_working_set_bytes 1.048576e+09 ${opts.at}`,
    `container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} ${opts.c} ${opts.at}`,
    `container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 5.24288e+06 ${opts.at}`,
    `container_start_time_seconds{container="c",namespace="ns",pod="p"} ${opts.start ?? 1000}`,
  ];
  if (opts.d !== undefined) {
    lines.push(
      `container_cpu_usage_seconds_total{container="d",namespace="ns",pod="p"} ${opts.d} ${opts.at - 500}`,
    );
    lines.push(
      `container_memory_working_set_bytes{container="d",namespace="ns",pod="p"} 1024 ${opts.at - 500}`,
    );
  }
  lines.push('resource_scrape_error 0');
  return `${lines.join('\n')}\n`;
}

describe('parseResourceMetrics', () => {
  it('reads node and container points with their sample times', () => {
    const s = parseResourceMetrics(body({ node: 12.5, c: 0.25, at: 1_700_000_000_000 }), 5);
    expect(s.at).toBe(5);
    expect(s.cpu).toEqual({ value: 12.5, ts: 1_700_000_000_000 });
    expect(s.memory).toEqual({ value: 1048576 * 1000, ts: 1_700_000_000_000 });
    expect(s.pods.get('ns/p')?.get('c')).toEqual({
      cpu: { value: 0.25, ts: 1_700_000_000_000 },
      memory: { value: 5242880, ts: 1_700_000_000_000 },
      startTime: 1000,
    });
  });

  it('uses the scrape time for samples without a timestamp and skips malformed lines', () => {
    const s = parseResourceMetrics(
      'node_cpu_usage_seconds_total 3\ngarbage here {\nnode_memory_working_set_bytes x 1\n',
      42,
    );
    expect(s.cpu).toEqual({ value: 3, ts: 42 });
    expect(s.memory).toBeUndefined();
  });

  it('unescapes label values', () => {
    const s = parseResourceMetrics(
      'container_cpu_usage_seconds_total{container="a\\"b",namespace="n",pod="p"} 1 2\n',
      0,
    );
    expect([...(s.pods.get('n/p')?.keys() ?? [])]).toEqual(['a"b']);
  });
});

describe('usage', () => {
  it('computes CPU as the counter difference over the sample window', () => {
    expect(cpuRate({ value: 10, ts: 1000 }, { value: 10.5, ts: 3000 })).toEqual({
      nanoCores: 250_000_000,
      windowMs: 2000,
    });
    expect(cpuRate({ value: 10, ts: 1000 }, { value: 9, ts: 3000 })).toBeUndefined();
    expect(cpuRate({ value: 10, ts: 3000 }, { value: 11, ts: 3000 })).toBeUndefined();
  });

  it("gives the node's usage with the newest sample's time and the window", () => {
    const prev = parseResourceMetrics(body({ node: 100, c: 1, at: 10_000 }), 10_000);
    const last = parseResourceMetrics(body({ node: 103, c: 1.2, at: 25_000 }), 25_000);
    expect(nodeUsage(prev, last)).toEqual({
      cpuNanoCores: 200_000_000,
      memoryBytes: 1048576000,
      timestamp: 25_000,
      windowMs: 15_000,
    });
  });

  it("gives a pod's usage only when every container has a rate, timed by the earliest", () => {
    const prev = parseResourceMetrics(body({ node: 1, c: 1, d: 2, at: 10_000 }), 10_000);
    const last = parseResourceMetrics(body({ node: 2, c: 1.5, d: 2.1, at: 20_000 }), 20_000);
    expect(podUsage(prev, last, 'ns/p')).toEqual({
      timestamp: 19_500,
      windowMs: 10_000,
      containers: [
        { name: 'c', cpuNanoCores: 50_000_000, memoryBytes: 5242880 },
        { name: 'd', cpuNanoCores: 10_000_000, memoryBytes: 1024 },
      ],
    });
    // A container new in the last scrape: no metrics for the pod yet.
    const without = parseResourceMetrics(body({ node: 1, c: 1, at: 10_000 }), 10_000);
    expect(podUsage(without, last, 'ns/p')).toBeUndefined();
    // A restart between the scrapes (new start time): none either.
    const restarted = parseResourceMetrics(body({ node: 2, c: 1.5, at: 20_000, start: 2000 }), 20_000);
    expect(podUsage(without, restarted, 'ns/p')).toBeUndefined();
    expect(podUsage(prev, last, 'ns/other')).toBeUndefined();
  });

  it('writes quantities in their canonical forms', () => {
    expect(cpuQuantity(0)).toBe('0');
    expect(cpuQuantity(123_456_789)).toBe('123456789n');
    expect(cpuQuantity(100_000_000)).toBe('100m');
    expect(cpuQuantity(1_500_000_000)).toBe('1500m');
    expect(cpuQuantity(2_000_000_000)).toBe('2');
    expect(cpuQuantity(1_000)).toBe('1u');
    expect(memoryQuantity(0)).toBe('0');
    expect(memoryQuantity(1000)).toBe('1k');
    expect(memoryQuantity(1023)).toBe('1023');
    expect(memoryQuantity(5_242_880)).toBe('5Mi');
    expect(memoryQuantity(1_228_800)).toBe('1200Ki');
    expect(memoryQuantity(5_242_881)).toBe('5242881');
    expect(memoryQuantity(123_000_000)).toBe('123M');
  });
});

describe('ResourceScraper', () => {
  function fakeAgent() {
    let clock = 1_000_000;
    let cpu = 0;
    const calls: string[] = [];
    const scraper = new ResourceScraper(
      (node) => {
        calls.push(node);
        cpu += 1;
        if (node === 'down') return Promise.reject(new Error('connection refused'));
        return Promise.resolve(body({ node: cpu, c: cpu / 10, at: clock }));
      },
      () => undefined,
      { now: () => clock, minWindowMs: 1 },
    );
    return {
      scraper,
      calls,
      advance(ms: number) {
        clock += ms;
      },
    };
  }

  it('scrapes twice on the first read, reuses a fresh pair, and refreshes a stale one', async () => {
    const a = fakeAgent();
    const first = await a.scraper.pair('n');
    expect(a.calls).toEqual(['n', 'n']);
    expect(first?.prev).toBeDefined();
    a.advance(RESOLUTION_MS - 1);
    expect((await a.scraper.pair('n'))?.last).toBe(first?.last);
    expect(a.calls).toHaveLength(2);
    a.advance(1);
    await a.scraper.pair('n');
    // One new scrape: the previous newest is the older half of the pair.
    expect(a.calls).toHaveLength(3);
    a.advance(MAX_WINDOW_MS + 1);
    await a.scraper.pair('n');
    // After a long quiet the old scrape is too far back: two scrapes again.
    expect(a.calls).toHaveLength(5);
  });

  it('shares one refresh among concurrent reads and gives nothing for a failing node', async () => {
    const a = fakeAgent();
    await Promise.all([a.scraper.pair('n'), a.scraper.pair('n'), a.scraper.pair('n')]);
    expect(a.calls).toEqual(['n', 'n']);
    expect(await a.scraper.pair('down')).toBeUndefined();
  });
});
