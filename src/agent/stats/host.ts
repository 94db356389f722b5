/**
 * The node's own figures for the Summary API, read as cAdvisor reads them on cgroup v1: CPU from
 * the root cgroup's `cpuacct.usage` (else `/proc/stat`), memory from the root memory cgroup
 * (working set = usage − `total_inactive_file`, as kubelet's eviction manager and cAdvisor
 * count it), the root filesystem by `statfs`, processes from `/proc/loadavg` and `pid_max`,
 * interfaces from `/proc/net/dev`. Each reader answers undefined when its files are missing, so
 * a node without cgroup v1 still serves what it can.
 */
import { readFile, statfs } from 'node:fs/promises';
import type { FsStats, InterfaceStats, MemoryStats, RlimitStats } from './types.js';

/** Where the readers look (tests point them at fixtures). */
export interface HostPaths {
  readonly cgroupRoot: string;
  readonly proc: string;
}

/** The real machine's paths. */
export const HOST_PATHS: HostPaths = { cgroupRoot: '/sys/fs/cgroup', proc: '/proc' };

async function text(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `key value` lines (memory.stat, /proc/meminfo without the unit) as numbers. */
export function parseKeyValues(body: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    const m = /^([\w()]+):?\s+(\d+)/.exec(line);
    if (m) out.set(m[1] ?? '', Number(m[2]));
  }
  return out;
}

/** User hertz of `/proc/stat` (Linux's USER_HZ is 100 on every architecture kube supports). */
const USER_HZ = 100;

/** Cumulative busy CPU core-nanoseconds from `/proc/stat`'s `cpu` line (idle and iowait left out). */
export function parseProcStatCpu(body: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user/nice)
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return (busy * 1e9) / USER_HZ;
}

/** The node's cumulative CPU core-nanoseconds. */
export async function nodeCpuNanoseconds(paths: HostPaths = HOST_PATHS): Promise<number | undefined> {
  const usage = await text(`${paths.cgroupRoot}/cpuacct/cpuacct.usage`);
  if (usage !== undefined && /^\d+/.test(usage.trim())) return Number(usage.trim());
  const stat = await text(`${paths.proc}/stat`);
  return stat === undefined ? undefined : parseProcStatCpu(stat);
}

/**
 * Memory figures of a cgroup v1 memory controller directory: usage, working set (usage less
 * inactive file pages, never below 0), RSS and page faults from `memory.stat`'s hierarchical
 * `total_*` counters; `capacity` (bytes) gives `availableBytes` = capacity − working set.
 */
export function memoryFromCgroup(
  usage: number,
  stat: Map<string, number>,
  capacity?: number,
): Omit<MemoryStats, 'time'> {
  const inactive = stat.get('total_inactive_file') ?? stat.get('inactive_file') ?? 0;
  const workingSet = Math.max(0, usage - inactive);
  const rss = stat.get('total_rss') ?? stat.get('rss');
  const faults = stat.get('total_pgfault') ?? stat.get('pgfault');
  const major = stat.get('total_pgmajfault') ?? stat.get('pgmajfault');
  return {
    ...(capacity !== undefined ? { availableBytes: Math.max(0, capacity - workingSet) } : {}),
    usageBytes: usage,
    workingSetBytes: workingSet,
    ...(rss !== undefined ? { rssBytes: rss } : {}),
    ...(faults !== undefined ? { pageFaults: faults } : {}),
    ...(major !== undefined ? { majorPageFaults: major } : {}),
  };
}

/** The machine's memory in bytes (`MemTotal`). */
export async function memoryCapacity(paths: HostPaths = HOST_PATHS): Promise<number | undefined> {
  const info = await text(`${paths.proc}/meminfo`);
  const kb = info === undefined ? undefined : parseKeyValues(info).get('MemTotal');
  return kb === undefined ? undefined : kb * 1024;
}

/** The node's memory: the root memory cgroup, else `/proc/meminfo`. */
export async function nodeMemory(
  paths: HostPaths = HOST_PATHS,
): Promise<Omit<MemoryStats, 'time'> | undefined> {
  const capacity = await memoryCapacity(paths);
  const usage = await text(`${paths.cgroupRoot}/memory/memory.usage_in_bytes`);
  const stat = await text(`${paths.cgroupRoot}/memory/memory.stat`);
  if (usage !== undefined && stat !== undefined && /^\d+/.test(usage.trim()))
    return memoryFromCgroup(Number(usage.trim()), parseKeyValues(stat), capacity);
  const info = await text(`${paths.proc}/meminfo`);
  if (info === undefined || capacity === undefined) return undefined;
  const kv = parseKeyValues(info);
  const available = (kv.get('MemAvailable') ?? 0) * 1024;
  const free = (kv.get('MemFree') ?? 0) * 1024;
  return {
    availableBytes: available,
    usageBytes: capacity - free,
    workingSetBytes: capacity - available,
  };
}

/** A filesystem's figures by `statfs` of a path on it. */
export async function filesystem(path: string, time: string): Promise<FsStats | undefined> {
  try {
    const s = await statfs(path);
    return {
      time,
      availableBytes: s.bavail * s.bsize,
      capacityBytes: s.blocks * s.bsize,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodesFree: s.ffree,
      inodes: s.files,
      inodesUsed: s.files - s.ffree,
    };
  } catch {
    return undefined;
  }
}

/** Process limits: `pid_max` (bounded by `threads-max`) and the tasks now (`/proc/loadavg`). */
export async function rlimit(time: string, paths: HostPaths = HOST_PATHS): Promise<RlimitStats | undefined> {
  const pidMax = Number((await text(`${paths.proc}/sys/kernel/pid_max`))?.trim());
  const threadsMax = Number((await text(`${paths.proc}/sys/kernel/threads-max`))?.trim());
  const load = await text(`${paths.proc}/loadavg`);
  const cur = load === undefined ? NaN : Number(/\d+\/(\d+)/.exec(load)?.[1]);
  const max = [pidMax, threadsMax].filter((n) => Number.isFinite(n) && n > 0);
  if (max.length === 0 && !Number.isFinite(cur)) return undefined;
  return {
    time,
    ...(max.length > 0 ? { maxpid: Math.min(...max) } : {}),
    ...(Number.isFinite(cur) ? { curproc: cur } : {}),
  };
}

/** `/proc/net/dev` as interface figures (loopback left out, as cAdvisor does). */
export function parseNetDev(body: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of body.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (name === 'lo') continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    out.push({ name, rxBytes: f[0] ?? 0, rxErrors: f[2] ?? 0, txBytes: f[8] ?? 0, txErrors: f[10] ?? 0 });
  }
  return out;
}

/** The interface of the default route in `/proc/net/route` (undefined when there is none). */
export function defaultRouteInterface(body: string): string | undefined {
  for (const line of body.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === '00000000' && f[7] === '00000000') return f[0];
  }
  return undefined;
}

/** The node's interfaces, the default route's first. */
export async function nodeInterfaces(paths: HostPaths = HOST_PATHS): Promise<InterfaceStats[]> {
  const dev = await text(`${paths.proc}/net/dev`);
  if (dev === undefined) return [];
  const all = parseNetDev(dev);
  const route = await text(`${paths.proc}/net/route`);
  const def = route === undefined ? undefined : defaultRouteInterface(route);
  return [...all.filter((i) => i.name === def), ...all.filter((i) => i.name !== def)];
}

/** The machine's boot time (epoch ms), from `/proc/uptime`. */
export async function bootTime(paths: HostPaths = HOST_PATHS): Promise<number | undefined> {
  const up = Number((await text(`${paths.proc}/uptime`))?.split(' ')[0]);
  return Number.isFinite(up) ? Date.now() - up * 1000 : undefined;
}
