/**
 * What the node reports about the machine: capacity (cpu, memory, pods, ephemeral storage),
 * addresses and nodeInfo (machine ID, boot ID, kernel, OS image, architecture).
 */
import { readFileSync, statfsSync } from 'node:fs';
import { cpus, hostname, networkInterfaces, release, totalmem } from 'node:os';
import type { NodeAddress, NodeSystemInfo } from '../../api/types/core-v1.js';

/** The kubelet version the agent reports (the kube minor whose behaviour it follows). */
export const KUBELET_VERSION = 'v1.33.0';

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The node name: `--hostname-override`, else the host name in lower case. */
export function nodeName(override: string): string {
  return (override || hostname()).toLowerCase();
}

/** The first non-loopback IPv4 address, or 127.0.0.1. */
export function defaultNodeIP(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** The node's capacity, as quantities. */
export function machineCapacity(rootDir: string, maxPods: number): Record<string, string> {
  let storage = 0;
  try {
    const s = statfsSync(rootDir);
    storage = s.blocks * s.bsize;
  } catch {
    // root dir not there yet: reported as 0
  }
  return {
    cpu: String(cpus().length),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: String(maxPods),
    'ephemeral-storage': `${Math.floor(storage / 1024)}Ki`,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
  };
}

/** Allocatable: capacity less the hard eviction thresholds on memory (kubelet's default 100Mi). */
export function machineAllocatable(
  capacity: Record<string, string>,
  evictionMemoryBytes: number,
): Record<string, string> {
  const memKi = Number((capacity['memory'] ?? '0Ki').replace('Ki', ''));
  return { ...capacity, memory: `${Math.max(0, memKi - Math.floor(evictionMemoryBytes / 1024))}Ki` };
}

/** The node's addresses: InternalIP and Hostname. */
export function nodeAddresses(nodeIP: string, name: string): NodeAddress[] {
  return [
    { type: 'InternalIP', address: nodeIP },
    { type: 'Hostname', address: name },
  ];
}

/** nodeInfo from the kernel, the OS and the runtime's version. */
export function nodeInfo(runtime: { name: string; version: string }): NodeSystemInfo {
  const osRelease = readTrim('/etc/os-release');
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? 'Linux';
  return {
    machineID: readTrim('/etc/machine-id'),
    systemUUID: readTrim('/sys/class/dmi/id/product_uuid'),
    bootID: readTrim('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: pretty,
    containerRuntimeVersion: `${runtime.name}://${runtime.version}`,
    kubeletVersion: KUBELET_VERSION,
    kubeProxyVersion: '',
    operatingSystem: 'linux',
    architecture: process.arch === 'x64' ? 'amd64' : process.arch,
  };
}
