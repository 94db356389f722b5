/**
 * The Summary API's figures (kubelet's `/stats/summary`), gathered on each request:
 *
 * - containers: CRI `ListContainerStats` for the running containers the agent made (its labels),
 *   the newest per name; `startTime` is the container's creation time, as kubelet reports it;
 * - pods: the pod's cgroup (kubelet's layout, `<cgroupRoot>/kubepods[/<qos>]/pod<uid>`) read as
 *   cAdvisor does, else CRI `ListPodSandboxStats`, else the sum of the containers; network and
 *   process count from the sandbox's stats;
 * - the node: the host readers of `host.ts`, and the agent itself as the `kubelet` system
 *   container and the pods' sum as `pods`.
 *
 * `usageNanoCores` is the runtime's when it reports one, else the rate since this provider's
 * previous sample of the same container, pod or node ({@link CpuRates}).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../api/types/core-v1.js';
import type { CriClient } from '../cri/client.js';
import type {
  CriContainerStats,
  CriCpuUsage,
  CriMemoryUsage,
  CriPodSandboxStats,
  CriUInt64,
} from '../cri/stats-types.js';
import { CONTAINER_NAME, isOurs, POD_UID } from '../runtime/labels.js';
import { podCgroup, podLogDir } from '../runtime/runtime.js';
import { CpuRates } from './cpu-rate.js';
import {
  bootTime,
  filesystem,
  HOST_PATHS,
  memoryCapacity,
  memoryFromCgroup,
  nodeCpuNanoseconds,
  nodeInterfaces,
  nodeMemory,
  parseKeyValues,
  rlimit,
  type HostPaths,
} from './host.js';
import type {
  ContainerStats,
  CpuStats,
  FsStats,
  InterfaceStats,
  MemoryStats,
  NetworkStats,
  PodStats,
  Summary,
} from './types.js';

/** What the provider reads of the agent. */
export interface StatsSource {
  readonly nodeName: string;
  readonly cri: CriClient;
  /** The pods the agent runs. */
  pods(): Pod[];
  /** The agent's root directory (the node filesystem's figures). */
  readonly rootDir: string;
  readonly podLogsDir: string;
  /** The cgroup under which pods go (`--cgroup-root`). */
  readonly cgroupRoot: string;
  readonly hostPaths?: HostPaths;
}

const num = (v: CriUInt64): number | undefined => (v === null ? undefined : Number(v.value));

function nsToIso(ns: string | undefined): string {
  const n = Number(ns ?? 0);
  return new Date(n > 0 ? n / 1e6 : Date.now()).toISOString();
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function dirBytes(dir: string): Promise<{ bytes: number; inodes: number } | undefined> {
  try {
    let bytes = 0;
    let inodes = 0;
    for (const e of await readdir(dir, { withFileTypes: true })) {
      inodes++;
      if (e.isFile()) bytes += (await stat(join(dir, e.name))).size;
    }
    return { bytes, inodes };
  } catch {
    return undefined;
  }
}

/** The object without its undefined fields (Summary JSON omits what was not measured). */
function compact<T extends object>(o: { [K in keyof T]: T[K] | undefined }): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** Sums optional figures; undefined when none is known. */
function sum(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === 0 ? undefined : known.reduce((a, b) => a + b, 0);
}

/** Gathers Summary figures for one agent. */
export class StatsProvider {
  readonly #src: StatsSource;
  readonly #rates = new CpuRates();
  readonly #paths: HostPaths;

  constructor(src: StatsSource) {
    this.#src = src;
    this.#paths = src.hostPaths ?? HOST_PATHS;
  }

  #cpu(key: string, usage: number | undefined, atNs: number, runtimeRate?: number): CpuStats {
    const time = new Date(atNs / 1e6).toISOString();
    if (usage === undefined) return { time };
    const rate =
      runtimeRate !== undefined && runtimeRate > 0 ? runtimeRate : this.#rates.rate(key, usage, atNs);
    return { time, ...(rate !== undefined ? { usageNanoCores: rate } : {}), usageCoreNanoSeconds: usage };
  }

  #criCpu(key: string, cpu: CriCpuUsage | null | undefined): CpuStats | undefined {
    if (!cpu) return undefined;
    return this.#cpu(
      key,
      num(cpu.usageCoreNanoSeconds),
      Number(cpu.timestamp) || Date.now() * 1e6,
      num(cpu.usageNanoCores),
    );
  }

  /** A cgroup v1 directory's CPU and memory (`relative` under each controller's mount). */
  async #cgroup(key: string, relative: string): Promise<{ cpu: CpuStats; memory: MemoryStats } | undefined> {
    const root = this.#paths.cgroupRoot;
    const usage = await readText(`${root}/cpuacct${relative}/cpuacct.usage`);
    const mem = await readText(`${root}/memory${relative}/memory.usage_in_bytes`);
    const memStat = await readText(`${root}/memory${relative}/memory.stat`);
    if (usage === undefined || mem === undefined || memStat === undefined) return undefined;
    const atNs = Date.now() * 1e6;
    const time = new Date(atNs / 1e6).toISOString();
    const limit = Number((await readText(`${root}/memory${relative}/memory.limit_in_bytes`))?.trim());
    const capacity = await memoryCapacity(this.#paths);
    const bound = Number.isFinite(limit) && capacity !== undefined && limit < capacity ? limit : capacity;
    return {
      cpu: this.#cpu(key, Number(usage.trim()), atNs),
      memory: { time, ...memoryFromCgroup(Number(mem.trim()), parseKeyValues(memStat), bound) },
    };
  }

  /** The Summary; with `onlyCpuAndMemory`, CPU and memory figures only (`/metrics/resource`'s). */
  async summary(onlyCpuAndMemory = false): Promise<Summary> {
    const cri = this.#src.cri;
    const [containers, containerStats, sandboxStats] = await Promise.all([
      cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      cri.listContainerStats(),
      cri.listPodSandboxStats().catch((): CriPodSandboxStats[] => []),
    ]);
    const statsById = new Map(containerStats.map((s) => [s.attributes?.id ?? '', s]));
    const sandboxByUid = new Map<string, CriPodSandboxStats>();
    for (const s of sandboxStats) {
      const uid = s.attributes?.labels[POD_UID] ?? s.attributes?.metadata?.uid;
      if (uid) sandboxByUid.set(uid, s);
    }
    /** uid → container name → the newest running container. */
    const byPod = new Map<string, Map<string, (typeof containers)[number]>>();
    for (const c of containers) {
      if (!isOurs(c.labels) || c.state !== 'CONTAINER_RUNNING') continue;
      const uid = c.labels[POD_UID] ?? '';
      const name = c.labels[CONTAINER_NAME] ?? c.metadata?.name ?? '';
      const m = byPod.get(uid) ?? new Map<string, (typeof containers)[number]>();
      const prev = m.get(name);
      if (!prev || Number(prev.createdAt) < Number(c.createdAt)) m.set(name, c);
      byPod.set(uid, m);
    }
    const keep = new Set<string>(['\0node', '\0kubelet', '\0pods']);
    const pods: PodStats[] = [];
    for (const pod of this.#src.pods()) {
      const uid = pod.metadata.uid ?? '';
      const running = byPod.get(uid);
      if (!running || running.size === 0) continue;
      keep.add(uid);
      const ref = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid };
      const list: ContainerStats[] = [];
      for (const [name, c] of [...running].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        keep.add(c.id);
        list.push(await this.#container(name, c.createdAt, ref, statsById.get(c.id), onlyCpuAndMemory));
      }
      const sandbox = sandboxByUid.get(uid);
      const cg = await this.#cgroup(uid, podCgroup(this.#src.cgroupRoot, pod));
      const cpu = cg?.cpu ?? this.#criCpu(uid, sandbox?.linux?.cpu) ?? this.#summedCpu(uid, list);
      const memory = cg?.memory ?? criMemory(sandbox?.linux?.memory) ?? summedMemory(list);
      const network = onlyCpuAndMemory ? undefined : criNetwork(sandbox);
      const processes = num(sandbox?.linux?.process?.processCount ?? null);
      const ephemeral = onlyCpuAndMemory ? undefined : ephemeralOf(list);
      pods.push({
        podRef: ref,
        startTime: pod.status?.startTime ?? list[0]?.startTime ?? new Date().toISOString(),
        containers: list,
        ...(cpu ? { cpu } : {}),
        ...(memory ? { memory } : {}),
        ...(network ? { network } : {}),
        ...(ephemeral ? { 'ephemeral-storage': ephemeral } : {}),
        ...(!onlyCpuAndMemory && processes !== undefined
          ? { process_stats: { process_count: processes } }
          : {}),
      });
    }
    this.#rates.prune(keep);
    return { node: await this.#node(pods, onlyCpuAndMemory), pods };
  }

  async #container(
    name: string,
    createdAt: string,
    ref: { namespace: string; name: string; uid: string },
    s: CriContainerStats | undefined,
    onlyCpuAndMemory: boolean,
  ): Promise<ContainerStats> {
    const cpu = this.#criCpu(s?.attributes?.id ?? name, s?.cpu);
    const memory = criMemory(s?.memory);
    let rootfs: FsStats | undefined;
    let logs: FsStats | undefined;
    if (!onlyCpuAndMemory) {
      const layer = s?.writableLayer;
      if (layer) {
        rootfs = compact<FsStats>({
          time: nsToIso(layer.timestamp),
          usedBytes: num(layer.usedBytes),
          inodesUsed: num(layer.inodesUsed),
        });
      }
      const used = await dirBytes(join(podLogDir(this.#src.podLogsDir, ref), name));
      if (used) logs = { time: new Date().toISOString(), usedBytes: used.bytes, inodesUsed: used.inodes };
    }
    return {
      name,
      startTime: nsToIso(createdAt),
      ...(cpu ? { cpu } : {}),
      ...(memory ? { memory } : {}),
      ...(rootfs ? { rootfs } : {}),
      ...(logs ? { logs } : {}),
    };
  }

  #summedCpu(key: string, list: readonly ContainerStats[]): CpuStats | undefined {
    const usage = sum(list.map((c) => c.cpu?.usageCoreNanoSeconds));
    if (usage === undefined) return undefined;
    const latest = Math.max(...list.map((c) => Date.parse(c.cpu?.time ?? '') || 0));
    return this.#cpu(key, usage, latest * 1e6);
  }

  async #node(pods: readonly PodStats[], onlyCpuAndMemory: boolean): Promise<Summary['node']> {
    const atNs = Date.now() * 1e6;
    const time = new Date(atNs / 1e6).toISOString();
    const [cpuNs, memory, boot] = await Promise.all([
      nodeCpuNanoseconds(this.#paths),
      nodeMemory(this.#paths),
      bootTime(this.#paths),
    ]);
    const self = process.cpuUsage();
    const selfStart = new Date(Date.now() - process.uptime() * 1000).toISOString();
    const rss = process.memoryUsage().rss;
    const systemContainers: ContainerStats[] = [
      {
        name: 'kubelet',
        startTime: selfStart,
        cpu: this.#cpu('\0kubelet', (self.user + self.system) * 1000, atNs),
        memory: { time, usageBytes: rss, workingSetBytes: rss, rssBytes: rss },
      },
      {
        name: 'pods',
        startTime: selfStart,
        ...(() => {
          const cpu = this.#summedCpu(
            '\0pods',
            pods.map((p) => ({ name: '', startTime: '', ...(p.cpu ? { cpu: p.cpu } : {}) })),
          );
          return cpu ? { cpu } : {};
        })(),
        ...(() => {
          const m = summedMemory(
            pods.map((p) => ({ name: '', startTime: '', ...(p.memory ? { memory: p.memory } : {}) })),
          );
          return m ? { memory: m } : {};
        })(),
      },
    ];
    let extra: Partial<Summary['node']> = {};
    if (!onlyCpuAndMemory) {
      const [fs, limits, interfaces] = await Promise.all([
        filesystem(this.#src.rootDir, time),
        rlimit(time, this.#paths),
        nodeInterfaces(this.#paths),
      ]);
      const first = interfaces[0];
      extra = {
        ...(first ? { network: { time, ...first, interfaces } } : {}),
        ...(fs ? { fs } : {}),
        ...(limits ? { rlimit: limits } : {}),
      };
    }
    return {
      nodeName: this.#src.nodeName,
      systemContainers,
      startTime: new Date(boot ?? Date.now()).toISOString(),
      cpu: this.#cpu('\0node', cpuNs, atNs),
      ...(memory ? { memory: { time, ...memory } } : {}),
      ...extra,
    };
  }
}

function criMemory(m: CriMemoryUsage | null | undefined): MemoryStats | undefined {
  if (!m) return undefined;
  return compact<MemoryStats>({
    time: nsToIso(m.timestamp),
    availableBytes: num(m.availableBytes),
    usageBytes: num(m.usageBytes),
    workingSetBytes: num(m.workingSetBytes),
    rssBytes: num(m.rssBytes),
    pageFaults: num(m.pageFaults),
    majorPageFaults: num(m.majorPageFaults),
  });
}

function summedMemory(list: readonly ContainerStats[]): MemoryStats | undefined {
  const ws = sum(list.map((c) => c.memory?.workingSetBytes));
  if (ws === undefined) return undefined;
  const usage = sum(list.map((c) => c.memory?.usageBytes));
  const rss = sum(list.map((c) => c.memory?.rssBytes));
  return {
    time: new Date().toISOString(),
    workingSetBytes: ws,
    ...(usage !== undefined ? { usageBytes: usage } : {}),
    ...(rss !== undefined ? { rssBytes: rss } : {}),
  };
}

function criNetwork(s: CriPodSandboxStats | undefined): NetworkStats | undefined {
  const n = s?.linux?.network;
  if (!n) return undefined;
  const iface = (i: NonNullable<typeof n.defaultInterface>): InterfaceStats =>
    compact<InterfaceStats>({
      name: i.name,
      rxBytes: num(i.rxBytes),
      rxErrors: num(i.rxErrors),
      txBytes: num(i.txBytes),
      txErrors: num(i.txErrors),
    });
  const def = n.defaultInterface ? iface(n.defaultInterface) : undefined;
  const all = [...(def ? [def] : []), ...n.interfaces.map(iface)];
  return { time: nsToIso(n.timestamp), ...(def ?? {}), ...(all.length > 0 ? { interfaces: all } : {}) };
}

function ephemeralOf(list: readonly ContainerStats[]): FsStats | undefined {
  const used = sum(list.flatMap((c) => [c.rootfs?.usedBytes, c.logs?.usedBytes]));
  const inodes = sum(list.flatMap((c) => [c.rootfs?.inodesUsed, c.logs?.inodesUsed]));
  if (used === undefined) return undefined;
  return {
    time: new Date().toISOString(),
    usedBytes: used,
    ...(inodes !== undefined ? { inodesUsed: inodes } : {}),
  };
}
