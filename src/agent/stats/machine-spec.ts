/**
 * kubelet's `/spec`: cAdvisor's MachineInfo of the node, with its JSON names (`num_cores`,
 * `memory_capacity`, `machine_id`, ...). Figures the machine does not expose are left out.
 */
import { readdir, readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { parseKeyValues } from './host.js';

async function text(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** The MachineInfo document. */
export async function machineSpec(): Promise<Record<string, unknown>> {
  const list = cpus();
  const cpuinfo = (await text('/proc/cpuinfo')) ?? '';
  const physical = new Set(
    [...cpuinfo.matchAll(/physical id\s*:\s*(\d+)[\s\S]*?core id\s*:\s*(\d+)/g)].map(
      (m) => `${m[1]}/${m[2]}`,
    ),
  );
  const sockets = new Set([...cpuinfo.matchAll(/physical id\s*:\s*(\d+)/g)].map((m) => m[1]));
  const maxKhz = Number(await text('/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq'));
  const meminfo = parseKeyValues((await text('/proc/meminfo')) ?? '');
  const devices: Record<string, unknown>[] = [];
  try {
    for (const name of await readdir('/sys/class/net')) {
      if (name === 'lo') continue;
      const base = `/sys/class/net/${name}`;
      devices.push({
        name,
        mac_address: (await text(`${base}/address`)) ?? '',
        speed: Number(await text(`${base}/speed`)) || 0,
        mtu: Number(await text(`${base}/mtu`)) || 0,
      });
    }
  } catch {
    // no /sys/class/net: no devices
  }
  return {
    timestamp: new Date().toISOString(),
    num_cores: list.length,
    num_physical_cores: physical.size || list.length,
    num_sockets: sockets.size || 1,
    cpu_frequency_khz:
      Number.isFinite(maxKhz) && maxKhz > 0 ? maxKhz : Math.round((list[0]?.speed ?? 0) * 1000),
    memory_capacity: totalmem(),
    swap_capacity: (meminfo.get('SwapTotal') ?? 0) * 1024,
    machine_id: (await text('/etc/machine-id')) ?? '',
    system_uuid: (await text('/sys/class/dmi/id/product_uuid')) ?? '',
    boot_id: (await text('/proc/sys/kernel/random/boot_id')) ?? '',
    network_devices: devices,
    cloud_provider: 'Unknown',
    instance_type: 'Unknown',
    instance_id: 'None',
  };
}
