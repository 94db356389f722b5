/**
 * Process and runtime metrics, read at scrape time: Prometheus' standard `process_*` names
 * (CPU, resident memory, start time, open file descriptors) and Node's heap and event-loop lag.
 */
import { readdir } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MetricsRegistry } from './registry.js';

/** Registers the process families; the event-loop monitor runs until `stop` is called. */
export function processMetrics(registry: MetricsRegistry): { stop(): void } {
  const cpu = registry.counter(
    'process_cpu_seconds_total',
    'Total user and system CPU time spent in seconds.',
  );
  const rss = registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
  const start = registry.gauge(
    'process_start_time_seconds',
    'Start time of the process since unix epoch in seconds.',
  );
  const fds = registry.gauge('process_open_fds', 'Number of open file descriptors.');
  const heap = registry.gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.');
  const lag = registry.gauge(
    'nodejs_eventloop_lag_p99_seconds',
    'The 99th percentile of the recorded event loop delays.',
  );
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  start.set([], Math.round(Date.now() / 1000 - process.uptime()));
  let lastCpu = 0;
  registry.collectOnScrape(async () => {
    const usage = process.cpuUsage();
    const total = (usage.user + usage.system) / 1e6;
    cpu.inc([], total - lastCpu);
    lastCpu = total;
    const mem = process.memoryUsage();
    rss.set([], mem.rss);
    heap.set([], mem.heapUsed);
    lag.set([], delay.percentile(99) / 1e9);
    try {
      fds.set([], (await readdir('/proc/self/fd')).length);
    } catch {
      // Not Linux: no descriptor count.
    }
  });
  return { stop: () => delay.disable() };
}
