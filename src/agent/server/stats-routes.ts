/**
 * The agent's monitoring endpoints, as kubelet serves them:
 * - `GET /stats/summary[?only_cpu_and_memory=true]`: the Summary API (`stats/v1alpha1`);
 * - `GET /metrics`: the agent's own metrics; `/metrics/resource`: CPU and memory of the node,
 *   pods and containers; `/metrics/probes`: probe counts;
 * - `GET /configz`: the running configuration; `GET /spec`: the machine's description.
 * Authentication and authorization happen before (`auth.ts`: `nodes/stats`, `nodes/metrics`,
 * `nodes/configz` or `nodes/proxy`, `nodes/proxy`).
 */
import { PROMETHEUS_TEXT } from '../stats/prometheus.js';
import { agentMetricsText, type AgentCounts } from '../stats/agent-metrics.js';
import { machineSpec } from '../stats/machine-spec.js';
import type { ProbeMetrics } from '../stats/probe-metrics.js';
import type { StatsProvider } from '../stats/provider.js';
import { resourceMetricsText } from '../stats/resource-metrics.js';
import type { Summary } from '../stats/types.js';

/** What the monitoring endpoints read. */
export interface MonitoringView {
  readonly stats: StatsProvider;
  readonly probes: ProbeMetrics;
  /** The `/configz` document. */
  configz(): unknown;
  /** The gauges of `/metrics`. */
  counts(): Promise<AgentCounts>;
  /** The version the agent reports (`kubernetes_build_info`). */
  readonly version: string;
}

/** An answer. */
export interface RouteAnswer {
  readonly code: number;
  readonly body: string;
  readonly type: string;
}

const JSON_TYPE = 'application/json';
const TIME_KEYS = new Set(['time', 'startTime']);

/** The Summary as kubelet writes it: times as RFC 3339 to the second (`metav1.Time`). */
export function summaryJson(summary: Summary): string {
  return JSON.stringify(summary, (key, value: unknown) =>
    TIME_KEYS.has(key) && typeof value === 'string' ? value.replace(/\.\d+Z$/, 'Z') : value,
  );
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Answers a monitoring path; undefined for every other path. */
export async function monitoringRoute(
  method: string,
  rawPath: string,
  query: URLSearchParams,
  view: MonitoringView,
): Promise<RouteAnswer | undefined> {
  const path = trimSlash(rawPath);
  const known = ['/stats/summary', '/metrics', '/metrics/resource', '/metrics/probes', '/configz', '/spec'];
  if (!known.includes(path)) return undefined;
  if (method !== 'GET' && method !== 'HEAD')
    return { code: 405, body: `${method} is not allowed on ${path}`, type: 'text/plain; charset=utf-8' };
  switch (path) {
    case '/stats/summary': {
      const only = ['true', '1'].includes(query.get('only_cpu_and_memory') ?? '');
      try {
        return { code: 200, body: summaryJson(await view.stats.summary(only)), type: JSON_TYPE };
      } catch (err) {
        return {
          code: 500,
          body: `Internal Error: failed to get node info: ${(err as Error).message}`,
          type: 'text/plain; charset=utf-8',
        };
      }
    }
    case '/metrics/resource': {
      let summary: Summary | undefined;
      try {
        summary = await view.stats.summary(true);
      } catch (err) {
        console.error(`agent: gathering resource metrics: ${(err as Error).message}`);
      }
      return { code: 200, body: resourceMetricsText(summary), type: PROMETHEUS_TEXT };
    }
    case '/metrics/probes':
      return { code: 200, body: view.probes.text(), type: PROMETHEUS_TEXT };
    case '/metrics':
      return { code: 200, body: agentMetricsText(await view.counts(), view.version), type: PROMETHEUS_TEXT };
    case '/configz':
      return { code: 200, body: JSON.stringify(view.configz()), type: JSON_TYPE };
    default:
      return { code: 200, body: JSON.stringify(await machineSpec()), type: JSON_TYPE };
  }
}
