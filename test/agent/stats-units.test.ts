/**
 * The agent's stats pieces without a runtime: the cgroup v1 and /proc parsers (against fixture
 * files), the CPU rate cache, the Prometheus writer's number form, `/metrics/resource` from a
 * Summary, probe counters and kubelet's subresource mapping.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subresourcesOf } from '../../src/agent/server/auth.js';
import { summaryJson } from '../../src/agent/server/stats-routes.js';
import { CpuRates } from '../../src/agent/stats/cpu-rate.js';
import {
  defaultRouteInterface,
  memoryFromCgroup,
  nodeCpuNanoseconds,
  nodeMemory,
  parseKeyValues,
  parseNetDev,
  parseProcStatCpu,
  rlimit,
  type HostPaths,
} from '../../src/agent/stats/host.js';
import { ProbeMetrics } from '../../src/agent/stats/probe-metrics.js';
import { goFloat } from '../../src/api/go-format.js';
import { resourceMetricsText } from '../../src/agent/stats/resource-metrics.js';
import type { Summary } from '../../src/agent/stats/types.js';

const MEMORY_STAT = `cache 100
rss 50
total_cache 5188378624
total_rss 399466496
total_pgfault 541314100
total_pgmajfault 24667
total_inactive_file 2038136832
`;

describe('host readers', () => {
  let dir: string;
  let paths: HostPaths;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-host-'));
    paths = { cgroupRoot: join(dir, 'cgroup'), proc: join(dir, 'proc') };
    await mkdir(join(dir, 'cgroup/cpuacct'), { recursive: true });
    await mkdir(join(dir, 'cgroup/memory'), { recursive: true });
    await mkdir(join(dir, 'proc/sys/kernel'), { recursive: true });
    await writeFile(join(dir, 'cgroup/cpuacct/cpuacct.usage'), '33851711701848\n');
    await writeFile(join(dir, 'cgroup/memory/memory.usage_in_bytes'), '5587546112\n');
    await writeFile(join(dir, 'cgroup/memory/memory.stat'), MEMORY_STAT);
    await writeFile(join(dir, 'proc/meminfo'), 'MemTotal:       24684084 kB\nMemFree:        18469220 kB\n');
    await writeFile(join(dir, 'proc/loadavg'), '0.52 0.61 0.70 3/1234 98765\n');
    await writeFile(join(dir, 'proc/sys/kernel/pid_max'), '4194304\n');
    await writeFile(join(dir, 'proc/sys/kernel/threads-max'), '191830\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the node CPU from cpuacct.usage, else /proc/stat busy time', async () => {
    expect(await nodeCpuNanoseconds(paths)).toBe(33851711701848);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    expect(parseProcStatCpu('cpu  100 10 50 9999 77 5 5 30 0 0\ncpu0 1 2 3\n')).toBe(200 * 1e7);
    expect(parseProcStatCpu('intr 1\n')).toBeUndefined();
  });

  it('computes the working set as usage less total_inactive_file, available from capacity', async () => {
    const m = await nodeMemory(paths);
    expect(m).toEqual({
      availableBytes: 24684084 * 1024 - (5587546112 - 2038136832),
      usageBytes: 5587546112,
      workingSetBytes: 5587546112 - 2038136832,
      rssBytes: 399466496,
      pageFaults: 541314100,
      majorPageFaults: 24667,
    });
    // Never below zero; a non-hierarchical stat falls back to the local counters.
    expect(memoryFromCgroup(10, parseKeyValues('inactive_file 20\nrss 4\n')).workingSetBytes).toBe(0);
    expect(memoryFromCgroup(10, parseKeyValues('inactive_file 2\nrss 4\n'))).toMatchObject({
      workingSetBytes: 8,
      rssBytes: 4,
    });
  });

  it('reads process limits as the lower of pid_max and threads-max, and the current tasks', async () => {
    expect(await rlimit('t', paths)).toEqual({ time: 't', maxpid: 191830, curproc: 1234 });
  });

  it('parses /proc/net/dev without loopback and finds the default route interface', () => {
    const dev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 5000 50 2 0 0 0 0 0 7000 70 3 0 0 0 0 0
`;
    expect(parseNetDev(dev)).toEqual([
      { name: 'eth0', rxBytes: 5000, rxErrors: 2, txBytes: 7000, txErrors: 3 },
    ]);
    const route = `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth1\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
`;
    expect(defaultRouteInterface(route)).toBe('eth0');
  });
});

describe('CpuRates', () => {
  it('answers the rate between samples, none for the first, and restarts after a reset', () => {
    const r = new CpuRates();
    expect(r.rate('a', 1e9, 10e9)).toBeUndefined();
    // 0.5 core-seconds over 2 s: a quarter core.
    expect(r.rate('a', 1.5e9, 12e9)).toBe(250_000_000);
    // Less than a second later: the kept rate, the sample is not kept.
    expect(r.rate('a', 1.6e9, 12.5e9)).toBe(250_000_000);
    expect(r.rate('a', 2.5e9, 14e9)).toBe(500_000_000);
    // The counter went backwards (a new container): start over.
    expect(r.rate('a', 1e8, 16e9)).toBeUndefined();
    expect(r.rate('a', 1.1e9, 18e9)).toBe(500_000_000);
    r.prune(new Set());
    expect(r.rate('a', 2e9, 20e9)).toBeUndefined();
  });
});

describe('Prometheus text', () => {
  it("writes numbers as Go's shortest %g", () => {
    expect(goFloat(0)).toBe('0');
    expect(goFloat(0.25)).toBe('0.25');
    expect(goFloat(123456)).toBe('123456');
    expect(goFloat(1234567)).toBe('1.234567e+06');
    expect(goFloat(5587546112)).toBe('5.587546112e+09');
    expect(goFloat(0.00001)).toBe('1e-05');
    expect(goFloat(0.0001)).toBe('0.0001');
  });

  it('renders /metrics/resource from a Summary with timestamps and sorted labels', () => {
    const t = '2026-01-02T03:04:05.678Z';
    const summary: Summary = {
      node: {
        nodeName: 'n',
        startTime: t,
        cpu: { time: t, usageCoreNanoSeconds: 2.5e9 },
        memory: { time: t, workingSetBytes: 1024 },
      },
      pods: [
        {
          podRef: { name: 'p', namespace: 'ns', uid: 'u' },
          startTime: t,
          cpu: { time: t, usageCoreNanoSeconds: 1e9 },
          memory: { time: t, workingSetBytes: 2048 },
          containers: [
            {
              name: 'c',
              startTime: '2026-01-02T03:00:00Z',
              cpu: { time: t, usageCoreNanoSeconds: 5e8 },
              memory: { time: t, workingSetBytes: 512 },
            },
          ],
        },
      ],
    };
    const ms = Date.parse(t);
    const text = resourceMetricsText(summary);
    expect(text).toContain(`node_cpu_usage_seconds_total 2.5 ${ms}\n`);
    expect(text).toContain(`node_memory_working_set_bytes 1024 ${ms}\n`);
    expect(text).toContain(
      `container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 0.5 ${ms}\n`,
    );
    // 1767322800 s, in Go's exponent form.
    expect(text).toContain(
      'container_start_time_seconds{container="c",namespace="ns",pod="p"} 1.7673228e+09\n',
    );
    expect(text).toContain(`pod_memory_working_set_bytes{namespace="ns",pod="p"} 2048 ${ms}\n`);
    expect(text).toContain('# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was');
    expect(text).toContain('resource_scrape_error 0\n');
    expect(text).not.toContain('swap');
    // Families are sorted by name.
    const names = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1] ?? '');
    expect(names).toEqual([...names].sort());
    const failed = resourceMetricsText(undefined);
    expect(failed).toContain('resource_scrape_error 1\n');
    expect(failed).not.toContain('node_cpu');
  });

  it('writes Summary times to the second', () => {
    const json = summaryJson({ node: { nodeName: 'n', startTime: '2026-01-02T03:04:05.678Z' }, pods: [] });
    expect(json).toBe('{"node":{"nodeName":"n","startTime":"2026-01-02T03:04:05Z"},"pods":[]}');
  });
});

describe('ProbeMetrics', () => {
  it('counts runs by type and result, and forgets gone pods', () => {
    const m = new ProbeMetrics();
    const run = { type: 'readiness', namespace: 'ns', pod: 'p', podUID: 'u', container: 'c' } as const;
    m.observe({ ...run, ok: true });
    m.observe({ ...run, ok: true });
    m.observe({ ...run, ok: false });
    m.observe({ ...run, type: 'liveness', ok: undefined });
    const text = m.text();
    expect(text).toContain(
      'prober_probe_total{container="c",namespace="ns",pod="p",pod_uid="u",probe_type="Readiness",result="successful"} 2\n',
    );
    expect(text).toContain('probe_type="Readiness",result="failed"} 1\n');
    expect(text).toContain('probe_type="Liveness",result="unknown"} 1\n');
    m.retain(new Set());
    expect(m.text()).toBe('');
  });
});

describe('subresourcesOf', () => {
  it('maps paths as kubelet 1.33 does (fine-grained first, then the coarse subresource)', () => {
    expect(subresourcesOf('/stats/summary')).toEqual(['stats']);
    expect(subresourcesOf('/stats')).toEqual(['stats']);
    expect(subresourcesOf('/metrics/resource')).toEqual(['metrics']);
    expect(subresourcesOf('/metrics')).toEqual(['metrics']);
    expect(subresourcesOf('/logs/syslog')).toEqual(['log']);
    expect(subresourcesOf('/configz')).toEqual(['configz', 'proxy']);
    expect(subresourcesOf('/healthz')).toEqual(['healthz', 'proxy']);
    expect(subresourcesOf('/pods')).toEqual(['pods', 'proxy']);
    expect(subresourcesOf('/runningpods/')).toEqual(['pods', 'proxy']);
    expect(subresourcesOf('/spec/')).toEqual(['proxy']);
    expect(subresourcesOf('/exec/ns/p/c')).toEqual(['proxy']);
    expect(subresourcesOf('/containerLogs/ns/p/c')).toEqual(['proxy']);
    expect(subresourcesOf('/metricsfoo')).toEqual(['proxy']);
  });
});
