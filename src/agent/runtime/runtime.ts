/**
 * The agent's view of the container runtime: its own sandboxes and containers grouped by pod,
 * and the CRI calls that create and destroy them.
 *
 * Only objects carrying kube's identity labels (`labels.ts`, {@link isOurs}) are ever listed,
 * stopped or removed: a container started beside the agent (by `ctr`, or another CRI client
 * without those labels) is invisible to it.
 *
 * Container details (exit code, times, reason) come from ContainerStatus; an exited container's
 * status never changes, so it is cached by id (with its termination message,
 * `termination-message.ts`), and a running one is re-read only when its listed state changes.
 * Sandbox IPs are cached the same way.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod, ResourceRequirements } from '../../api/types/core-v1.js';
import { CriError, isCriNotFound, type CriClient } from '../cri/client.js';
import type * as CRI from '../cri/types.js';
import {
  CONTAINER_NAME,
  CONTAINER_TYPE,
  POD_GRACE,
  POD_UID,
  RESTART_COUNT,
  TERMINATION_MESSAGE_PATH,
  TERMINATION_MESSAGE_POLICY,
  containerLabels,
  isOurs,
  sandboxLabels,
} from './labels.js';
import { podDnsConfig } from '../network/dns-config.js';
import { linuxResources, qosClass } from './resources.js';
import { sandboxSysctls } from '../pod/sysctls.js';
import { sandboxHostname } from './hosts.js';
import { statusMessage } from './termination-message.js';

/** Where a container's termination message is written unless its spec says (kube's default). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** Which list of the pod spec a container comes from (kubelet's `io.kubernetes.container.type`). */
export type ContainerType = 'init' | 'regular' | 'ephemeral';

function containerTypeOf(annotation: string | undefined): ContainerType {
  return annotation === 'init' || annotation === 'ephemeral' ? annotation : 'regular';
}

/** One container instance of a pod, as the runtime reports it. Times are epoch milliseconds. */
export interface ContainerInstance {
  readonly id: string;
  readonly sandboxId: string;
  readonly name: string;
  readonly type: ContainerType;
  readonly restartCount: number;
  readonly state: CRI.ContainerState;
  readonly createdAt: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly exitCode: number;
  readonly reason: string;
  readonly message: string;
  readonly image: string;
  readonly imageRef: string;
  readonly logPath: string;
  /** Its cgroup settings as the runtime reports them (absent where it reports none). */
  readonly resources?: CRI.LinuxContainerResources;
}

/** CRI's Linux resources with their 64-bit integers (decimal strings on the wire) as numbers. */
function linuxOf(status: CRI.ContainerStatus): CRI.LinuxContainerResources | undefined {
  const linux = status.resources?.linux;
  if (!linux) return undefined;
  const n = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : Number(v));
  const out: CRI.LinuxContainerResources = {};
  const cpuPeriod = n(linux.cpuPeriod);
  const cpuQuota = n(linux.cpuQuota);
  const cpuShares = n(linux.cpuShares);
  const memoryLimitInBytes = n(linux.memoryLimitInBytes);
  if (cpuPeriod !== undefined) out.cpuPeriod = cpuPeriod;
  if (cpuQuota !== undefined) out.cpuQuota = cpuQuota;
  if (cpuShares !== undefined) out.cpuShares = cpuShares;
  if (memoryLimitInBytes !== undefined) out.memoryLimitInBytes = memoryLimitInBytes;
  return out;
}

/** One sandbox of a pod. */
export interface SandboxInstance {
  readonly id: string;
  readonly attempt: number;
  readonly ready: boolean;
  readonly createdAt: number;
  readonly ips: readonly string[];
}

/** Everything the runtime holds for one pod, newest first. */
export interface PodRuntimeState {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly sandboxes: SandboxInstance[];
  readonly containers: ContainerInstance[];
}

/** How the runtime layer is set up. */
export interface RuntimeOptions {
  /** Directory of pod logs (kubelet's `podLogsDir`, /var/log/pods). */
  readonly podLogsDir: string;
  /** The cgroup root under which `kubepods` lives (cgroupfs paths). */
  readonly cgroupRoot: string;
  readonly clusterDNS: readonly string[];
  readonly clusterDomain: string;
  /** kubelet's `--resolv-conf`, the basis of pods' DNS (default `/etc/resolv.conf`; empty: none). */
  readonly resolvConf?: string;
}

const nsToMs = (ns: string): number => Number(BigInt(ns || '0') / 1_000_000n);

/** The directory of a pod's logs: `<podLogsDir>/<namespace>_<name>_<uid>`. */
export function podLogDir(root: string, pod: { namespace: string; name: string; uid: string }): string {
  return join(root, `${pod.namespace}_${pod.name}_${pod.uid}`);
}

/** The cgroup parent of a pod (kubelet's layout under cgroupsPerQOS). */
export function podCgroup(root: string, pod: Pod): string {
  const qos = qosClass(pod);
  const uid = pod.metadata.uid ?? '';
  const base = root === '/' ? '' : root.replace(/\/$/, '');
  return qos === 'Guaranteed'
    ? `${base}/kubepods/pod${uid}`
    : `${base}/kubepods/${qos.toLowerCase()}/pod${uid}`;
}

/** The agent's runtime manager over one CRI client. */
export class PodRuntime {
  readonly cri: CriClient;
  readonly #opts: RuntimeOptions;
  readonly #statusCache = new Map<string, { state: CRI.ContainerState; status: CRI.ContainerStatus }>();
  readonly #sandboxIps = new Map<string, string[]>();

  constructor(cri: CriClient, opts: RuntimeOptions) {
    this.cri = cri;
    this.#opts = opts;
  }

  get options(): RuntimeOptions {
    return this.#opts;
  }

  async #containerStatus(c: CRI.Container): Promise<CRI.ContainerStatus | undefined> {
    const cached = this.#statusCache.get(c.id);
    if (cached && cached.state === c.state) return cached.status;
    try {
      const reported = await this.cri.containerStatus(c.id);
      // An exited container's message carries its termination message, read once.
      const status = { ...reported, message: await statusMessage(reported) };
      this.#statusCache.set(c.id, { state: status.state, status });
      return status;
    } catch (err) {
      if (isCriNotFound(err)) return undefined;
      throw err;
    }
  }

  async #sandboxIpsOf(sb: CRI.PodSandbox): Promise<string[]> {
    if (sb.state !== 'SANDBOX_READY') return [];
    const cached = this.#sandboxIps.get(sb.id);
    if (cached) return cached;
    try {
      const st = await this.cri.podSandboxStatus(sb.id);
      const ips = [st.network?.ip ?? '', ...(st.network?.additionalIps ?? []).map((i) => i.ip)].filter(
        Boolean,
      );
      this.#sandboxIps.set(sb.id, ips);
      return ips;
    } catch (err) {
      if (isCriNotFound(err)) return [];
      throw err;
    }
  }

  /** Every pod the runtime holds for this agent (by uid); `uid` narrows to one pod. */
  async listPods(uid?: string): Promise<Map<string, PodRuntimeState>> {
    const selector = uid ? { labelSelector: { [POD_UID]: uid } } : undefined;
    const [sandboxes, containers] = await Promise.all([
      this.cri.listPodSandbox(selector),
      this.cri.listContainers(selector),
    ]);
    const pods = new Map<string, PodRuntimeState>();
    const podOf = (labels: Record<string, string>): PodRuntimeState => {
      const id = labels[POD_UID] ?? '';
      let p = pods.get(id);
      if (!p) {
        p = {
          uid: id,
          name: labels['io.kubernetes.pod.name'] ?? '',
          namespace: labels['io.kubernetes.pod.namespace'] ?? '',
          sandboxes: [],
          containers: [],
        };
        pods.set(id, p);
      }
      return p;
    };
    const live = new Set<string>();
    const ours = sandboxes.filter((sb) => isOurs(sb.labels));
    const oursC = containers.filter((c) => isOurs(c.labels));
    // The statuses not cached yet are asked for at once (a relist after a burst of new pods).
    const [ips, statuses] = await Promise.all([
      Promise.all(ours.map((sb) => this.#sandboxIpsOf(sb))),
      Promise.all(oursC.map((c) => this.#containerStatus(c))),
    ]);
    ours.forEach((sb, i) => {
      live.add(sb.id);
      podOf(sb.labels).sandboxes.push({
        id: sb.id,
        attempt: sb.metadata.attempt ?? 0,
        ready: sb.state === 'SANDBOX_READY',
        createdAt: nsToMs(sb.createdAt),
        ips: ips[i] ?? [],
      });
    });
    for (const [i, c] of oursC.entries()) {
      live.add(c.id);
      const st = statuses[i];
      if (!st) continue;
      const resources = linuxOf(st);
      podOf(c.labels).containers.push({
        id: c.id,
        sandboxId: c.podSandboxId,
        name: c.labels[CONTAINER_NAME] ?? c.metadata.name,
        type: containerTypeOf(c.annotations[CONTAINER_TYPE]),
        restartCount: Number(c.annotations[RESTART_COUNT] ?? c.metadata.attempt ?? 0),
        state: st.state,
        createdAt: nsToMs(st.createdAt),
        startedAt: nsToMs(st.startedAt),
        finishedAt: nsToMs(st.finishedAt),
        exitCode: st.exitCode,
        reason: st.reason,
        message: st.message,
        image: st.image?.image ?? '',
        imageRef: st.imageRef,
        logPath: st.logPath,
        ...(resources ? { resources } : {}),
      });
    }
    if (!uid) {
      for (const id of this.#statusCache.keys()) if (!live.has(id)) this.#statusCache.delete(id);
      for (const id of this.#sandboxIps.keys()) if (!live.has(id)) this.#sandboxIps.delete(id);
    }
    for (const p of pods.values()) {
      p.sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
      p.containers.sort((a, b) => b.createdAt - a.createdAt);
    }
    return pods;
  }

  /** The sandbox config of a pod at an attempt (also needed to create its containers). */
  sandboxConfig(pod: Pod, attempt: number): CRI.PodSandboxConfig {
    const meta = pod.metadata;
    const spec = pod.spec ?? {};
    const dnsConfig = podDnsConfig(pod, {
      clusterDNS: this.#opts.clusterDNS,
      clusterDomain: this.#opts.clusterDomain,
      resolvConf: this.#opts.resolvConf ?? '/etc/resolv.conf',
    });
    const ports: CRI.PortMapping[] = [];
    for (const c of spec.containers ?? []) {
      for (const p of c.ports ?? []) {
        if (!p.hostPort) continue;
        ports.push({
          protocol: (p.protocol ?? 'TCP') as 'TCP',
          containerPort: p.containerPort ?? 0,
          hostPort: p.hostPort,
          hostIp: p.hostIP ?? '',
        });
      }
    }
    return {
      metadata: { name: meta.name ?? '', uid: meta.uid ?? '', namespace: meta.namespace ?? '', attempt },
      ...hostnameOf(pod, this.#opts.clusterDomain),
      logDirectory: podLogDir(this.#opts.podLogsDir, {
        namespace: meta.namespace ?? '',
        name: meta.name ?? '',
        uid: meta.uid ?? '',
      }),
      dnsConfig,
      portMappings: ports,
      labels: sandboxLabels(pod),
      annotations: { ...(meta.annotations ?? {}) },
      linux: {
        cgroupParent: podCgroup(this.#opts.cgroupRoot, pod),
        securityContext: {
          namespaceOptions: {
            network: spec.hostNetwork ? 'NODE' : 'POD',
            pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
            ipc: spec.hostIPC ? 'NODE' : 'POD',
          },
          ...(spec.securityContext?.runAsUser !== undefined
            ? { runAsUser: { value: spec.securityContext.runAsUser } }
            : {}),
          ...(spec.securityContext?.runAsGroup !== undefined
            ? { runAsGroup: { value: spec.securityContext.runAsGroup } }
            : {}),
          ...supplementalGroupsOf(pod),
          // The runtime refuses a privileged container in a sandbox that is not (kubelet's
          // HasPrivilegedContainer).
          privileged: hasPrivilegedContainer(pod),
        },
        sysctls: sandboxSysctls(pod),
      },
    };
  }

  /** Creates and starts a pod's sandbox; answers its id. */
  async runSandbox(pod: Pod, attempt: number): Promise<string> {
    const config = this.sandboxConfig(pod, attempt);
    await mkdir(config.logDirectory ?? this.#opts.podLogsDir, { recursive: true });
    return this.cri.runPodSandbox(config);
  }

  /**
   * Creates a container in a sandbox (not started). `env` is already resolved; `command` and
   * `args` already expanded. `targetId`: the running container whose process namespace an
   * ephemeral container joins (its `targetContainerName`), as kubelet's namespace target.
   * `resources`: the container's allocated resources, where they differ from its spec (a
   * resize the node has accepted).
   */
  async createContainer(
    pod: Pod,
    sandbox: SandboxInstance,
    spec: Container,
    opts: {
      type: ContainerType;
      restartCount: number;
      targetId?: string;
      env: CRI.KeyValue[];
      command: string[];
      args: string[];
      image: string;
      /** Volume mounts (src/agent/volumes/mounts.ts). */
      mounts?: CRI.Mount[];
      resources?: ResourceRequirements | undefined;
    },
  ): Promise<string> {
    const name = spec.name ?? '';
    const sc = spec.securityContext ?? {};
    const podSc = pod.spec?.securityContext ?? {};
    const runAsUser = sc.runAsUser ?? podSc.runAsUser;
    const runAsGroup = sc.runAsGroup ?? podSc.runAsGroup;
    const pid = pod.spec?.hostPID ? 'NODE' : pod.spec?.shareProcessNamespace ? 'POD' : 'CONTAINER';
    const logPath = `${name}/${opts.restartCount}.log`;
    await mkdir(join(this.sandboxConfig(pod, sandbox.attempt).logDirectory ?? '', name), { recursive: true });
    const config: CRI.ContainerConfig = {
      metadata: { name, attempt: opts.restartCount },
      image: { image: opts.image, userSpecifiedImage: spec.image ?? '' },
      command: opts.command,
      args: opts.args,
      workingDir: spec.workingDir ?? '',
      envs: opts.env,
      ...(opts.mounts && opts.mounts.length > 0 ? { mounts: opts.mounts } : {}),
      labels: containerLabels(pod, name),
      annotations: {
        [RESTART_COUNT]: String(opts.restartCount),
        [CONTAINER_TYPE]: opts.type,
        [POD_GRACE]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
        [TERMINATION_MESSAGE_PATH]: spec.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH,
        [TERMINATION_MESSAGE_POLICY]: spec.terminationMessagePolicy ?? 'File',
      },
      logPath,
      stdin: spec.stdin ?? false,
      stdinOnce: spec.stdinOnce ?? false,
      tty: spec.tty ?? false,
      linux: {
        resources: linuxResources(
          opts.resources ? { ...spec, resources: opts.resources } : spec,
          qosClass(pod),
        ),
        securityContext: {
          namespaceOptions: {
            network: pod.spec?.hostNetwork ? 'NODE' : 'POD',
            // A target only matters where each container has its own process namespace.
            ...(opts.targetId !== undefined && pid === 'CONTAINER'
              ? { pid: 'TARGET' as const, targetId: opts.targetId }
              : { pid }),
            ipc: pod.spec?.hostIPC ? 'NODE' : 'POD',
          },
          privileged: sc.privileged ?? false,
          readonlyRootfs: sc.readOnlyRootFilesystem ?? false,
          ...(runAsUser !== undefined ? { runAsUser: { value: runAsUser } } : {}),
          ...(runAsGroup !== undefined ? { runAsGroup: { value: runAsGroup } } : {}),
          ...supplementalGroupsOf(pod),
          ...(sc.capabilities
            ? {
                capabilities: {
                  addCapabilities: sc.capabilities.add ?? [],
                  dropCapabilities: sc.capabilities.drop ?? [],
                },
              }
            : {}),
          noNewPrivs: sc.allowPrivilegeEscalation === false,
          ...(sc.seccompProfile?.type === 'Unconfined'
            ? { seccomp: { profileType: 'Unconfined' as const } }
            : {}),
        },
      },
    };
    return this.cri.createContainer(sandbox.id, config, this.sandboxConfig(pod, sandbox.attempt));
  }

  /**
   * Changes a running container's cgroup settings in place (CRI UpdateContainerResources); its
   * status is read again on the next listing.
   */
  async updateResources(id: string, linux: CRI.LinuxContainerResources): Promise<void> {
    try {
      await this.cri.updateContainerResources(id, linux);
    } finally {
      this.#statusCache.delete(id);
    }
  }

  /** Stops a container with a grace period; a container already gone is not an error. */
  async stopContainer(id: string, graceSeconds: number): Promise<void> {
    try {
      await this.cri.stopContainer(id, Math.max(0, Math.floor(graceSeconds)));
    } catch (err) {
      if (!isCriNotFound(err)) throw err;
    }
  }

  async removeContainer(id: string): Promise<void> {
    try {
      await this.cri.removeContainer(id);
    } catch (err) {
      if (!isCriNotFound(err)) throw err;
    }
    this.#statusCache.delete(id);
  }

  /** Stops and removes a sandbox (its containers go with it). */
  async removeSandbox(id: string): Promise<void> {
    try {
      await this.cri.stopPodSandbox(id);
      await this.cri.removePodSandbox(id);
    } catch (err) {
      if (!(err instanceof CriError) || !isCriNotFound(err)) throw err;
    }
    this.#sandboxIps.delete(id);
  }
}

/**
 * The supplemental groups of the pod's sandbox and containers, as kubelet's effective security
 * context makes them: the `fsGroup` first (so that the processes may use what the volumes
 * group-own), then `supplementalGroups`.
 */
function supplementalGroupsOf(pod: Pod): { supplementalGroups?: number[] } {
  const sc = pod.spec?.securityContext;
  const groups = [...(sc?.fsGroup !== undefined ? [sc.fsGroup] : []), ...(sc?.supplementalGroups ?? [])];
  return groups.length === 0 ? {} : { supplementalGroups: groups };
}

/** The sandbox config's hostname field: absent on the host network. */
function hostnameOf(pod: Pod, clusterDomain: string): { hostname?: string } {
  const hostname = sandboxHostname(pod, clusterDomain);
  return hostname === undefined ? {} : { hostname };
}

/** Whether any container of the pod (init, regular or ephemeral) is privileged. */
function hasPrivilegedContainer(pod: Pod): boolean {
  const spec = pod.spec;
  return [
    ...(spec?.initContainers ?? []),
    ...(spec?.containers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ].some((c) => c.securityContext?.privileged === true);
}
