/**
 * The shapes of CRI v1's stats messages as the client decodes them (`longs: String`,
 * `defaults: true`): 64-bit numbers are decimal strings, absent messages are `null`.
 */

/** CRI's `UInt64Value` wrapper; `null` when the runtime did not measure it. */
export type CriUInt64 = { readonly value: string } | null;

/** CRI `CpuUsage`. */
export interface CriCpuUsage {
  /** Nanoseconds since the epoch. */
  readonly timestamp: string;
  readonly usageCoreNanoSeconds: CriUInt64;
  readonly usageNanoCores: CriUInt64;
}

/** CRI `MemoryUsage`. */
export interface CriMemoryUsage {
  readonly timestamp: string;
  readonly workingSetBytes: CriUInt64;
  readonly availableBytes: CriUInt64;
  readonly usageBytes: CriUInt64;
  readonly rssBytes: CriUInt64;
  readonly pageFaults: CriUInt64;
  readonly majorPageFaults: CriUInt64;
}

/** CRI `FilesystemUsage`. */
export interface CriFilesystemUsage {
  readonly timestamp: string;
  readonly fsId: { readonly mountpoint: string } | null;
  readonly usedBytes: CriUInt64;
  readonly inodesUsed: CriUInt64;
}

/** CRI `SwapUsage`. */
export interface CriSwapUsage {
  readonly timestamp: string;
  readonly swapAvailableBytes: CriUInt64;
  readonly swapUsageBytes: CriUInt64;
}

/** CRI `ContainerStats`. */
export interface CriContainerStats {
  readonly attributes: {
    readonly id: string;
    readonly metadata: { readonly name: string; readonly attempt: number } | null;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  } | null;
  readonly cpu: CriCpuUsage | null;
  readonly memory: CriMemoryUsage | null;
  readonly writableLayer: CriFilesystemUsage | null;
  readonly swap: CriSwapUsage | null;
}

/** CRI `NetworkInterfaceUsage`. */
export interface CriInterfaceUsage {
  readonly name: string;
  readonly rxBytes: CriUInt64;
  readonly rxErrors: CriUInt64;
  readonly txBytes: CriUInt64;
  readonly txErrors: CriUInt64;
}

/** CRI `PodSandboxStats` (Linux). */
export interface CriPodSandboxStats {
  readonly attributes: {
    readonly id: string;
    readonly metadata: {
      readonly name: string;
      readonly uid: string;
      readonly namespace: string;
      readonly attempt: number;
    } | null;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  } | null;
  readonly linux: {
    readonly cpu: CriCpuUsage | null;
    readonly memory: CriMemoryUsage | null;
    readonly network: {
      readonly timestamp: string;
      readonly defaultInterface: CriInterfaceUsage | null;
      readonly interfaces: readonly CriInterfaceUsage[];
    } | null;
    readonly process: { readonly timestamp: string; readonly processCount: CriUInt64 } | null;
    readonly containers: readonly CriContainerStats[];
  } | null;
}
