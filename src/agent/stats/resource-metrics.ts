/**
 * kubelet's `/metrics/resource`: the CPU and memory figures of the Summary as Prometheus
 * families, with kube's names, labels, stability levels and sample timestamps (the time of each
 * reading), which metrics-server and Capstan's `metrics.k8s.io` turn into rates:
 *
 * - `node_cpu_usage_seconds_total`, `node_memory_working_set_bytes`, `node_swap_usage_bytes`;
 * - `container_cpu_usage_seconds_total`, `container_memory_working_set_bytes`,
 *   `container_start_time_seconds`, `container_swap_usage_bytes` by `container`, `pod`,
 *   `namespace`;
 * - `pod_cpu_usage_seconds_total`, `pod_memory_working_set_bytes`, `pod_swap_usage_bytes` by
 *   `pod`, `namespace`;
 * - `resource_scrape_error` (and its deprecated twin `scrape_error`): 1 when the figures could
 *   not be gathered, and then no other sample.
 */
import { renderFamilies, type Family, type Sample } from './prometheus.js';
import type { Summary } from './types.js';

const ms = (iso: string | undefined): number | undefined => {
  const t = iso === undefined ? NaN : Date.parse(iso);
  return Number.isFinite(t) ? t : undefined;
};

function sample(value: number, labels: Record<string, string> | undefined, time: string | undefined): Sample {
  const t = ms(time);
  return { value, ...(labels ? { labels } : {}), ...(t !== undefined ? { timestampMs: t } : {}) };
}

/** The families of a Summary (undefined: gathering failed, only the error gauges are 1). */
export function resourceFamilies(summary: Summary | undefined): Family[] {
  const f = (
    name: string,
    help: string,
    type: 'counter' | 'gauge',
    stability: 'STABLE' | 'ALPHA',
    samples: Sample[],
    deprecatedVersion?: string,
  ): Family => ({
    name,
    help,
    type,
    stability,
    samples,
    ...(deprecatedVersion ? { deprecatedVersion } : {}),
  });
  const nodeCpu: Sample[] = [];
  const nodeMem: Sample[] = [];
  const nodeSwap: Sample[] = [];
  const cCpu: Sample[] = [];
  const cMem: Sample[] = [];
  const cStart: Sample[] = [];
  const cSwap: Sample[] = [];
  const pCpu: Sample[] = [];
  const pMem: Sample[] = [];
  const pSwap: Sample[] = [];
  if (summary) {
    const n = summary.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined)
      nodeCpu.push(sample(n.cpu.usageCoreNanoSeconds / 1e9, undefined, n.cpu.time));
    if (n.memory?.workingSetBytes !== undefined)
      nodeMem.push(sample(n.memory.workingSetBytes, undefined, n.memory.time));
    if (n.swap?.swapUsageBytes !== undefined)
      nodeSwap.push(sample(n.swap.swapUsageBytes, undefined, n.swap.time));
    for (const p of summary.pods) {
      const pl = { pod: p.podRef.name, namespace: p.podRef.namespace };
      for (const c of p.containers) {
        const cl = { container: c.name, ...pl };
        const start = ms(c.startTime);
        if (start !== undefined && start > 0) cStart.push({ labels: cl, value: start / 1000 });
        if (c.cpu?.usageCoreNanoSeconds !== undefined)
          cCpu.push(sample(c.cpu.usageCoreNanoSeconds / 1e9, cl, c.cpu.time));
        if (c.memory?.workingSetBytes !== undefined)
          cMem.push(sample(c.memory.workingSetBytes, cl, c.memory.time));
        if (c.swap?.swapUsageBytes !== undefined) cSwap.push(sample(c.swap.swapUsageBytes, cl, c.swap.time));
      }
      if (p.cpu?.usageCoreNanoSeconds !== undefined)
        pCpu.push(sample(p.cpu.usageCoreNanoSeconds / 1e9, pl, p.cpu.time));
      if (p.memory?.workingSetBytes !== undefined)
        pMem.push(sample(p.memory.workingSetBytes, pl, p.memory.time));
      if (p.swap?.swapUsageBytes !== undefined) pSwap.push(sample(p.swap.swapUsageBytes, pl, p.swap.time));
    }
  }
  const error = [{ value: summary ? 0 : 1 }];
  const ERR = '1 if there was an error while getting container metrics, 0 otherwise';
  return [
    f(
      'node_cpu_usage_seconds_total',
      'Cumulative cpu time consumed by the node in core-seconds',
      'counter',
      'STABLE',
      nodeCpu,
    ),
    f(
      'node_memory_working_set_bytes',
      'Current working set of the node in bytes',
      'gauge',
      'STABLE',
      nodeMem,
    ),
    f(
      'node_swap_usage_bytes',
      'Current swap usage of the node in bytes. Reported only on non-windows systems',
      'gauge',
      'ALPHA',
      nodeSwap,
    ),
    f(
      'container_start_time_seconds',
      'Start time of the container since unix epoch in seconds',
      'gauge',
      'STABLE',
      cStart,
    ),
    f(
      'container_cpu_usage_seconds_total',
      'Cumulative cpu time consumed by the container in core-seconds',
      'counter',
      'STABLE',
      cCpu,
    ),
    f(
      'container_memory_working_set_bytes',
      'Current working set of the container in bytes',
      'gauge',
      'STABLE',
      cMem,
    ),
    f(
      'container_swap_usage_bytes',
      'Current amount of the container swap usage in bytes. Reported only on non-windows systems',
      'gauge',
      'ALPHA',
      cSwap,
    ),
    f(
      'pod_cpu_usage_seconds_total',
      'Cumulative cpu time consumed by the pod in core-seconds',
      'counter',
      'STABLE',
      pCpu,
    ),
    f('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', 'gauge', 'STABLE', pMem),
    f(
      'pod_swap_usage_bytes',
      'Current amount of the pod swap usage in bytes. Reported only on non-windows systems',
      'gauge',
      'ALPHA',
      pSwap,
    ),
    f('scrape_error', ERR, 'gauge', 'ALPHA', error, '1.29.0'),
    f('resource_scrape_error', ERR, 'gauge', 'STABLE', error),
  ];
}

/** The text of `/metrics/resource`. */
export function resourceMetricsText(summary: Summary | undefined): string {
  return renderFamilies(resourceFamilies(summary));
}
