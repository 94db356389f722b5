/**
 * kubelet's Summary API (`stats/v1alpha1`, served at `/stats/summary`): the JSON shapes, with
 * kubelet's field names. Times are RFC 3339 strings; every figure is optional, as kubelet omits
 * what it could not measure.
 */

/** `CPUStats`. */
export interface CpuStats {
  readonly time: string;
  /** Cores × 10⁹ averaged over the last sampling window. */
  readonly usageNanoCores?: number;
  /** Cumulative core-nanoseconds. */
  readonly usageCoreNanoSeconds?: number;
}

/** `MemoryStats`. */
export interface MemoryStats {
  readonly time: string;
  readonly availableBytes?: number;
  readonly usageBytes?: number;
  readonly workingSetBytes?: number;
  readonly rssBytes?: number;
  readonly pageFaults?: number;
  readonly majorPageFaults?: number;
}

/** `SwapStats`. */
export interface SwapStats {
  readonly time: string;
  readonly swapAvailableBytes?: number;
  readonly swapUsageBytes?: number;
}

/** `InterfaceStats`. */
export interface InterfaceStats {
  readonly name: string;
  readonly rxBytes?: number;
  readonly rxErrors?: number;
  readonly txBytes?: number;
  readonly txErrors?: number;
}

/** `NetworkStats`: the default interface inline, every interface in `interfaces`. */
export interface NetworkStats extends Partial<InterfaceStats> {
  readonly time: string;
  readonly interfaces?: readonly InterfaceStats[];
}

/** `FsStats`. */
export interface FsStats {
  readonly time: string;
  readonly availableBytes?: number;
  readonly capacityBytes?: number;
  readonly usedBytes?: number;
  readonly inodesFree?: number;
  readonly inodes?: number;
  readonly inodesUsed?: number;
}

/** `RlimitStats`. */
export interface RlimitStats {
  readonly time: string;
  readonly maxpid?: number;
  readonly curproc?: number;
}

/** `ContainerStats` (of a pod's container, or a node's system container). */
export interface ContainerStats {
  readonly name: string;
  readonly startTime: string;
  readonly cpu?: CpuStats;
  readonly memory?: MemoryStats;
  readonly swap?: SwapStats;
  readonly rootfs?: FsStats;
  readonly logs?: FsStats;
}

/** `PodReference`. */
export interface PodReference {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** `PodStats`. */
export interface PodStats {
  readonly podRef: PodReference;
  readonly startTime: string;
  readonly containers: readonly ContainerStats[];
  readonly cpu?: CpuStats;
  readonly memory?: MemoryStats;
  readonly swap?: SwapStats;
  readonly network?: NetworkStats;
  readonly 'ephemeral-storage'?: FsStats;
  readonly process_stats?: { readonly process_count?: number };
}

/** `NodeStats`. */
export interface NodeStats {
  readonly nodeName: string;
  readonly systemContainers?: readonly ContainerStats[];
  readonly startTime: string;
  readonly cpu?: CpuStats;
  readonly memory?: MemoryStats;
  readonly swap?: SwapStats;
  readonly network?: NetworkStats;
  readonly fs?: FsStats;
  readonly runtime?: { readonly imageFs?: FsStats; readonly containerFs?: FsStats };
  readonly rlimit?: RlimitStats;
}

/** `Summary`. */
export interface Summary {
  readonly node: NodeStats;
  readonly pods: readonly PodStats[];
}
