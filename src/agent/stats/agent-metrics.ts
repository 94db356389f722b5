/**
 * The agent's own `/metrics`: process figures (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_start_time_seconds`, ...), `kubernetes_build_info`,
 * and kubelet's pod and container gauges (`kubelet_node_name`, `kubelet_running_pods`,
 * `kubelet_running_containers` by `container_state`).
 */
import { readdirSync } from 'node:fs';
import { renderFamilies, type Family } from './prometheus.js';

/** What the gauges count. */
export interface AgentCounts {
  readonly nodeName: string;
  /** Pods with a running sandbox. */
  readonly runningPods: number;
  /** Containers by CRI state, as kubelet names them (`running`, `exited`, `created`, `unknown`). */
  readonly containers: Readonly<Record<string, number>>;
}

function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/** The text of `/metrics`. */
export function agentMetricsText(counts: AgentCounts, version: string): string {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  const start = Date.now() / 1000 - process.uptime();
  const fds = openFds();
  const g = (
    name: string,
    help: string,
    stability: Family['stability'],
    samples: Family['samples'],
  ): Family => ({
    name,
    help,
    type: 'gauge',
    stability,
    samples,
  });
  const families: Family[] = [
    {
      name: 'process_cpu_seconds_total',
      help: 'Total user and system CPU time spent in seconds.',
      type: 'counter',
      stability: 'ALPHA',
      samples: [{ value: (cpu.user + cpu.system) / 1e6 }],
    },
    g('process_resident_memory_bytes', 'Resident memory size in bytes.', 'ALPHA', [{ value: mem.rss }]),
    g('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', 'ALPHA', [
      { value: start },
    ]),
    g(
      'process_open_fds',
      'Number of open file descriptors.',
      'ALPHA',
      fds === undefined ? [] : [{ value: fds }],
    ),
    g(
      'kubernetes_build_info',
      "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
      'ALPHA',
      [
        {
          labels: {
            git_version: version,
            major: '1',
            minor: '33',
            platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
          },
          value: 1,
        },
      ],
    ),
    g('kubelet_node_name', "The node's name. The count is always 1.", 'ALPHA', [
      { labels: { node: counts.nodeName }, value: 1 },
    ]),
    g('kubelet_running_pods', 'Number of pods that have a running pod sandbox', 'ALPHA', [
      { value: counts.runningPods },
    ]),
    g(
      'kubelet_running_containers',
      'Number of containers currently running',
      'ALPHA',
      Object.entries(counts.containers).map(([state, n]) => ({
        labels: { container_state: state },
        value: n,
      })),
    ),
  ];
  return renderFamilies(families);
}
