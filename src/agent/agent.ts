/**
 * The node agent: wires the runtime, the pod workers, the sources, the node's API objects and
 * the agent's server together.
 *
 * Start-up order: CRI client; API client (with `--kubeconfig`); node registration (its pod CIDR
 * then goes into the CNI conf); runtime watcher; pod sources; servers. Runtime pods no source
 * wants are killed only after every source has listed once, so a restarted agent adopts its
 * running pods (same container IDs) instead of restarting them.
 */
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Pod, PodStatus } from '../api/types/core-v1.js';
import { Client, loadKubeconfig, type ClientConfig } from '../client/index.js';
import { ApiEventRecorder } from './api/event-recorder.js';
import { isMirrorPod, MirrorPods } from './api/mirror-pods.js';
import { isStaticPod } from './pod/static.js';
import { apiLookup } from './api/lookup.js';
import { defaultNodeIP, nodeAddresses, nodeName as resolveNodeName } from './api/machine.js';
import { CertificateManager, KUBELET_SERVING_SIGNER, SERVING_USAGES } from './cert-manager.js';
import { certValid, currentPairPath, loadCurrentPair } from './cert-store.js';
import { NodeStatusManager } from './api/node-status.js';
import { ApiPodSource } from './api/pod-source.js';
import { StatusManager } from './api/status-manager.js';
import type { AgentConfig } from './config.js';
import { CriClient } from './cri/client.js';
import { writeCniConfig } from './network/cni.js';
import { startNodeNetwork, type NodeNetworkTuning } from './network/node-network.js';
import { Backoff } from './pod/backoff.js';
import { LogEventSink, type EventSink } from './pod/events.js';
import { ProbeManager } from './probe/manager.js';
import { PodWorkers } from './pod/workers.js';
import { allocatedPod, sumAllocatedRequests } from './pod/resize.js';
import { AllocationCheckpoint, CHECKPOINT_FILE } from './pod/allocation-checkpoint.js';
import { admitPod } from './pod/admission.js';
import type { PodRecord } from './pod/sync.js';
import type { ObjectLookup } from './runtime/env.js';
import { parseQuantity } from './runtime/resources.js';
import { ImageManager } from './runtime/images.js';
import { PodRuntime, type PodRuntimeState } from './runtime/runtime.js';
import { RuntimeWatcher } from './runtime/watcher.js';
import { isOurs } from './runtime/labels.js';
import { configzOf } from './server/configz.js';
import { startAgentServer, startHealthServer } from './server/server.js';
import type { AgentCounts } from './stats/agent-metrics.js';
import { ProbeMetrics } from './stats/probe-metrics.js';
import { StatsProvider } from './stats/provider.js';
import { servingCertificate } from './serving-cert.js';
import { AGENT_USER_AGENT, bootstrapClient, CLIENT_USAGES, KUBELET_CLIENT_SIGNER } from './tls-bootstrap.js';
import { StaticFileSource } from './sources/static-files.js';
import { SubmissionSource } from './sources/submissions.js';
import { UrlSource } from './sources/url.js';
import { VolumeManager } from './volumes/manager.js';

const STANDALONE_LOOKUP: ObjectLookup = {
  configMap: () => Promise.resolve(undefined),
  secret: () => Promise.resolve(undefined),
  services: () => Promise.resolve([]),
};

/**
 * With `rotateCertificates`, a certificate identity uses `<cert-dir>/kubelet-client-current.pem`
 * (when it holds a valid pair) and re-reads it after each rotation; other identities are kept.
 */
function rotatingClientConfig(config: AgentConfig, client: ClientConfig): ClientConfig {
  if (!config.rotateCertificates || client.certData === undefined) return client;
  const path = currentPairPath(config.certDir, 'kubelet-client');
  const stored = loadCurrentPair(config.certDir, 'kubelet-client');
  return {
    ...client,
    certFile: path,
    keyFile: path,
    ...(stored && certValid(stored.cert)
      ? { certData: Buffer.from(stored.cert), keyData: Buffer.from(stored.key) }
      : {}),
  };
}

/**
 * What an in-process embedder (`capstan cluster`, tests) hands the agent beyond its flags: every
 * field is optional and defaults to the stand-alone agent's behaviour.
 */
export interface AgentWiring {
  /** The API client's configuration, instead of `--kubeconfig` (an in-memory loopback identity). */
  readonly client?: ClientConfig;
  /** The CNI network's name (default `capstan`): it prefixes libcni's cached results. */
  readonly cniNetworkName?: string;
  /**
   * The in-agent proxy's, DNS's and NetworkPolicy enforcer's own identities, instead of their
   * kubeconfig flags (each falls back to its flag, then to the agent's client).
   */
  readonly networkClients?: {
    readonly proxy?: ClientConfig;
    readonly dns?: ClientConfig;
    readonly networkPolicy?: ClientConfig;
  };
  /** Table names, DNS port and clean-up of the in-process networking (tests, the single-node cluster). */
  readonly network?: NodeNetworkTuning;
}

/** A running agent. */
export class Agent {
  readonly config: AgentConfig;
  readonly nodeName: string;
  readonly nodeIP: string;
  readonly cri: CriClient;
  readonly #client: Client | undefined;
  readonly #workers: PodWorkers;
  readonly #runtime: PodRuntime;
  readonly #volumes: VolumeManager;
  readonly #statuses = new Map<string, PodStatus>();
  readonly #closers: (() => Promise<void> | void)[] = [];
  readonly #pendingSources = new Set<string>();
  readonly #wiring: AgentWiring;
  #node: NodeStatusManager | undefined;
  #statusManager: StatusManager | undefined;
  #mirrors: MirrorPods | undefined;
  #submissions: SubmissionSource | undefined;
  readonly #events: EventSink;
  #watcher: RuntimeWatcher | undefined;
  #runtimeOk = false;
  /** Probe counts of `/metrics/probes`. */
  readonly probeMetrics = new ProbeMetrics();
  /** The Summary API's figures (`/stats/summary`, `/metrics/resource`). */
  readonly stats: StatsProvider;
  /** The agent server's port once started. */
  port = 0;

  constructor(config: AgentConfig, wiring: AgentWiring = {}) {
    this.config = config;
    this.#wiring = wiring;
    this.nodeName = resolveNodeName(config.hostnameOverride);
    this.nodeIP = config.nodeIP || defaultNodeIP();
    this.cri = new CriClient(config.containerRuntimeEndpoint);
    const clientConfig = wiring.client ?? (config.kubeconfig ? loadKubeconfig(config.kubeconfig) : undefined);
    this.#client = clientConfig
      ? new Client({
          ...rotatingClientConfig(config, clientConfig),
          userAgent: AGENT_USER_AGENT,
          qps: 50,
          burst: 100,
        })
      : undefined;
    const events: EventSink = this.#client
      ? new ApiEventRecorder(this.#client, this.nodeName, { qps: config.eventQPS, burst: config.eventBurst })
      : new LogEventSink();
    this.#events = events;
    this.#runtime = new PodRuntime(this.cri, {
      podLogsDir: config.podLogsDir,
      cgroupRoot: config.cgroupRoot,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain || 'cluster.local',
      resolvConf: config.resolvConf,
    });
    const api = this.#client ? apiLookup(this.#client, (m) => console.error(`agent: ${m}`)) : undefined;
    if (api !== undefined) this.#closers.push(() => api.stop());
    const lookup = api ?? STANDALONE_LOOKUP;
    const sysctls = config.sysctls;
    const nodeAllocatable = {
      cpu: cpus().length,
      memory: totalmem() - (parseQuantity(config.evictionHard['memory.available']) || 0),
    };
    this.#volumes = new VolumeManager({
      rootDir: config.rootDir,
      ...(this.#client ? { client: this.#client } : {}),
      ...(api ? { lookup: api } : {}),
      nodeAllocatable,
      wake: (uid) => this.#workers.wake(uid),
    });
    this.#workers = new PodWorkers(
      {
        volumes: this.#volumes,
        runtime: this.#runtime,
        images: new ImageManager(this.cri, events),
        events,
        backoff: new Backoff(),
        probes: new ProbeManager(
          this.cri,
          events,
          (uid) => this.#workers.wake(uid),
          (run) => this.probeMetrics.observe(run),
        ),
        envContext: (_pod, podIPs) => ({ lookup, hostIPs: [this.nodeIP], podIPs, nodeAllocatable }),
        node: {
          allocatable: nodeAllocatable,
          allocatedToOthers: (uid) => sumAllocatedRequests(this.#admitted(uid)),
        },
        admit: (record) => {
          // Sysctls first, as kubelet's admit handlers run, and for every pod.
          const forbidden = sysctls.forbidden(record.pod);
          if (forbidden !== undefined) return { reason: 'SysctlForbidden', message: forbidden };
          // Static pods are the node's own (kubelet would make room for a critical one): never
          // refused for fit. Without a Node object (no API server) there is nothing to check against.
          const node = this.#node?.node;
          if (isStaticPod(record.pod) || node === undefined) return undefined;
          const others = this.#admitted(record.pod.metadata.uid ?? '').map(allocatedPod);
          return admitPod(allocatedPod(record), node, others);
        },
        allocations: new AllocationCheckpoint(join(config.rootDir, CHECKPOINT_FILE)),
      },
      {
        onStatus: (record, status) => {
          this.#statuses.set(record.pod.metadata.uid ?? '', status);
          if (isStaticPod(record.pod)) this.#mirrors?.status(record.pod, status);
          else this.#statusManager?.set(record.pod, status);
        },
        onTerminated: (record) => {
          this.#statuses.delete(record.pod.metadata.uid ?? '');
          void this.#statusManager?.terminated(record.pod);
        },
        hostIPs: () => [this.nodeIP],
      },
    );
    this.stats = new StatsProvider({
      nodeName: this.nodeName,
      cri: this.cri,
      pods: () => this.pods(),
      rootDir: config.rootDir,
      podLogsDir: config.podLogsDir,
      cgroupRoot: config.cgroupRoot,
    });
  }

  /** The pods admitted here that still hold the node's resources (not finished), but `uid`. */
  #admitted(uid: string): PodRecord[] {
    return this.#workers.records().filter((r) => {
      const phase = this.#statuses.get(r.pod.metadata.uid ?? '')?.phase;
      return (
        r.admitted === true &&
        r.failure === undefined &&
        r.pod.metadata.uid !== uid &&
        !r.terminated &&
        phase !== 'Succeeded' &&
        phase !== 'Failed'
      );
    });
  }

  /** The pods the agent runs, with their latest statuses (the server's `/pods`). */
  pods(): Pod[] {
    return this.#workers
      .records()
      .map((r) => ({ ...r.pod, status: this.#statuses.get(r.pod.metadata.uid ?? '') ?? r.pod.status ?? {} }));
  }

  /** The gauges of `/metrics`: this agent's pods with a ready sandbox, its containers by state. */
  async #counts(): Promise<AgentCounts> {
    const uids = new Set(this.#workers.records().map((r) => r.pod.metadata.uid ?? ''));
    this.probeMetrics.retain(uids);
    const [sandboxes, containers] = await Promise.all([this.cri.listPodSandbox(), this.cri.listContainers()]);
    const states: Record<string, number> = { running: 0, exited: 0, created: 0, unknown: 0 };
    for (const x of containers.filter((x) => isOurs(x.labels))) {
      const state = x.state.replace('CONTAINER_', '').toLowerCase();
      states[state] = (states[state] ?? 0) + 1;
    }
    return {
      nodeName: this.nodeName,
      runningPods: sandboxes.filter((x) => isOurs(x.labels) && x.state === 'SANDBOX_READY').length,
      containers: states,
    };
  }

  /** Kills runtime pods no source wants, then removes the volumes of pods neither holds. */
  async #cleanupOrphans(pods: Map<string, PodRuntimeState>): Promise<void> {
    await this.#workers.cleanupOrphans(pods);
    const keep = new Set([...pods.keys(), ...this.#workers.records().map((r) => r.pod.metadata.uid ?? '')]);
    await this.#volumes.cleanupOrphans(keep);
  }

  #sourceSynced(name: string): void {
    this.#pendingSources.delete(name);
  }

  /**
   * A static source's handlers: its pods run here and get mirror pods (the API server's mirror
   * pods only tell the mirror manager what is there).
   */
  #staticHandlers(name: string) {
    return {
      update: (pod: Pod) => {
        this.#workers.update(pod);
        this.#mirrors?.staticPod(pod);
      },
      removed: (uid: string) => {
        this.#workers.remove(uid);
        this.#mirrors?.staticRemoved(uid);
      },
      synced: () => this.#sourceSynced(name),
      invalid: (pod: Pod, message: string) => {
        console.error(
          `agent: static pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}: ${message}`,
        );
        this.#events.event(pod, 'Warning', 'FailedValidation', message);
      },
    };
  }

  /** Starts everything; resolves once the node is registered and the server listens. */
  async start(): Promise<void> {
    const c = this.config;
    await this.cri.version().then(
      () => (this.#runtimeOk = true),
      (err: unknown) =>
        console.error(`agent: container runtime ${c.containerRuntimeEndpoint}: ${(err as Error).message}`),
    );
    let podCIDR = c.podCIDR;
    if (this.#client && c.rotateCertificates) {
      const client = this.#client;
      this.#startCertificateManager('kubelet-client', KUBELET_CLIENT_SIGNER, CLIENT_USAGES, () =>
        client.transport.reloadClientCertificate(),
      );
    }
    if (c.enableServer) {
      const bootstrapServing = c.serverTLSBootstrap && !c.tlsCertFile && this.#client !== undefined;
      if (c.serverTLSBootstrap && !bootstrapServing)
        console.error(
          'agent: --rotate-server-certificates needs an API server and no --tls-cert-file; serving with a self-signed certificate',
        );
      const { cert, key } = bootstrapServing
        ? (loadCurrentPair(c.certDir, 'kubelet-server') ?? {})
        : await servingCertificate({
            certFile: c.tlsCertFile,
            keyFile: c.tlsPrivateKeyFile,
            certDir: c.certDir,
            nodeName: this.nodeName,
            nodeIP: this.nodeIP,
          });
      const { readFileSync } = await import('node:fs');
      const server = await startAgentServer(
        {
          pods: () => this.pods(),
          containers: async (ns, name, container) => {
            const rec = this.#workers
              .records()
              .find((r) => r.pod.metadata.namespace === ns && r.pod.metadata.name === name);
            if (!rec) return undefined;
            const uid = rec.pod.metadata.uid ?? '';
            const state = (await this.#runtime.listPods(uid)).get(uid);
            return state?.containers.filter((x) => x.name === container) ?? [];
          },
          sandbox: async (ns, name) => {
            const rec = this.#workers
              .records()
              .find((r) => r.pod.metadata.namespace === ns && r.pod.metadata.name === name);
            if (!rec) return undefined;
            const uid = rec.pod.metadata.uid ?? '';
            return (await this.#runtime.listPods(uid)).get(uid)?.sandboxes.find((s) => s.ready)?.id;
          },
          cri: this.cri,
          submissions: (this.#submissions = new SubmissionSource(
            this.nodeName,
            this.#staticHandlers('submission'),
          )),
          monitoring: {
            stats: this.stats,
            probes: this.probeMetrics,
            configz: () => configzOf(c),
            counts: () => this.#counts(),
            version: 'v1.33.0-capstan',
          },
        },
        {
          address: c.address,
          port: c.port,
          ...(cert !== undefined && key !== undefined ? { cert, key } : {}),
          ...(c.clientCAFile ? { clientCA: readFileSync(c.clientCAFile, 'utf8') } : {}),
          debuggingHandlers: c.enableDebuggingHandlers,
          auth: {
            anonymous: c.anonymousAuth,
            clientCA: !!c.clientCAFile,
            mode: c.authorizationMode,
            ...(this.#client ? { client: this.#client } : {}),
            nodeName: this.nodeName,
          },
        },
      );
      this.port = server.port;
      this.#closers.push(() => server.close());
      if (bootstrapServing) {
        // kubelet serves no certificate until its serving CSR is approved and signed.
        this.#startCertificateManager('kubelet-server', KUBELET_SERVING_SIGNER, SERVING_USAGES, (pair) =>
          server.setCertificate(pair.cert, pair.key),
        );
      }
    }
    if (this.#client) {
      this.#node = new NodeStatusManager(this.#client, this.cri, {
        name: this.nodeName,
        nodeIP: this.nodeIP,
        port: this.port || c.port,
        labels: c.nodeLabels,
        taints: c.registerWithTaints,
        maxPods: c.maxPods,
        rootDir: c.rootDir,
        podCIDR: c.podCIDR,
        evictionMemoryBytes: parseQuantity(c.evictionHard['memory.available']) || 0,
      });
      this.#node.setRuntimeHealth(this.#runtimeOk);
      this.#statusManager = new StatusManager(this.#client);
      this.#mirrors = new MirrorPods(this.#client, this.nodeName, this.#statusManager, (uid) =>
        this.#workers.wake(uid),
      );
      this.#closers.push(() => this.#mirrors?.stop());
      // Pods submitted to the server before the mirror manager existed get their mirrors now.
      for (const r of this.#workers.records()) if (isStaticPod(r.pod)) this.#mirrors.staticPod(r.pod);
    }
    if (this.#node) {
      await this.#node.start();
      podCIDR ||= this.#node.podCIDR();
      this.#closers.push(() => this.#node?.stop());
    }
    if (podCIDR) {
      await writeCniConfig({
        confDir: c.cniConfDir,
        podCIDR,
        bridge: c.cniBridge,
        dataDir: join(c.rootDir, 'cni/networks'),
        ...(this.#wiring.cniNetworkName ? { name: this.#wiring.cniNetworkName } : {}),
      });
    }
    await this.#startNetwork(podCIDR ?? '');
    this.#watcher = new RuntimeWatcher(this.#runtime, c.containerRuntimeEndpoint, {
      wake: (uid) => this.#workers.wake(uid),
      relisted: (pods) => {
        if (this.#pendingSources.size === 0)
          void this.#cleanupOrphans(pods).catch((err: unknown) =>
            console.error(`agent: cleaning up orphaned pods: ${(err as Error).message}`),
          );
      },
      health: (ok, err) => {
        this.#runtimeOk = ok;
        this.#node?.setRuntimeHealth(ok, err);
      },
    });
    this.#watcher.start();
    this.#closers.push(() => this.#watcher?.stop());
    const handlers = (name: string) => this.#staticHandlers(name);
    if (this.#client) {
      this.#pendingSources.add('api');
      const src = new ApiPodSource(this.#client, this.nodeName, {
        update: (pod) => (isMirrorPod(pod) ? this.#mirrors?.observed(pod) : this.#workers.update(pod)),
        removed: (uid) => {
          this.#workers.remove(uid);
          this.#mirrors?.removed(uid);
        },
        synced: () => this.#sourceSynced('api'),
      });
      src.start();
      this.#closers.push(() => src.stop());
    }
    if (c.staticPodPath) {
      this.#pendingSources.add('file');
      const src = new StaticFileSource(
        c.staticPodPath,
        this.nodeName,
        c.fileCheckFrequencyMs,
        handlers('file'),
      );
      src.start();
      this.#closers.push(() => src.stop());
    }
    if (this.#submissions) {
      this.#pendingSources.add('submission');
      this.#submissions.start();
    }
    if (c.manifestURL) {
      this.#pendingSources.add('http');
      const src = new UrlSource(
        c.manifestURL,
        c.manifestURLHeader,
        this.nodeName,
        c.httpCheckFrequencyMs,
        handlers('http'),
      );
      src.start();
      this.#closers.push(() => src.stop());
    }
    if (c.healthzPort > 0) {
      const health = await startHealthServer(c.healthzBindAddress, c.healthzPort, () => this.#runtimeOk);
      this.#closers.push(() => health.close());
    }
  }

  /**
   * Keeps a certificate pair of `--cert-dir` current through CertificateSigningRequests made with
   * the agent's client; the serving pair asks for the node's addresses as its names.
   */
  #startCertificateManager(
    pair: 'kubelet-client' | 'kubelet-server',
    signerName: string,
    usages: readonly string[],
    rotated: (pair: { cert: string; key: string }) => void,
  ): void {
    if (!this.#client) return;
    const addresses = nodeAddresses(this.nodeIP, this.nodeName);
    const bootstrapKubeconfig = this.config.bootstrapKubeconfig;
    const isIP = (t: string | undefined): boolean => t === 'InternalIP' || t === 'ExternalIP';
    const manager = new CertificateManager({
      certDir: this.config.certDir,
      pair,
      nodeName: this.nodeName,
      signerName,
      usages,
      client: this.#client,
      ...(pair === 'kubelet-server'
        ? {
            names: () => ({
              dnsNames: addresses.filter((a) => !isIP(a.type)).map((a) => a.address ?? ''),
              ipAddresses: addresses.filter((a) => isIP(a.type)).map((a) => a.address ?? ''),
            }),
          }
        : {}),
      ...(pair === 'kubelet-client' && bootstrapKubeconfig
        ? { bootstrapClient: () => bootstrapClient(bootstrapKubeconfig) }
        : {}),
      rotated,
    });
    manager.start();
    this.#closers.push(() => manager.stop());
  }

  /** Starts the proxy, cluster DNS, NetworkPolicy enforcement and pod routes the configuration asks for. */
  async #startNetwork(podCIDR: string): Promise<void> {
    const c = this.config;
    if (!c.runProxy && !c.runClusterDNS && !c.runNetworkPolicy && !c.runPodRoutes) return;
    const wired = this.#wiring.networkClients ?? {};
    const base = (path: string): ClientConfig => {
      if (path) return loadKubeconfig(path);
      if (this.#wiring.client) return rotatingClientConfig(c, this.#wiring.client);
      if (c.kubeconfig) return rotatingClientConfig(c, loadKubeconfig(c.kubeconfig));
      throw new Error('the in-agent proxy, DNS and network policies need --kubeconfig');
    };
    const access = (own: ClientConfig | undefined, path: string, user: string) => ({
      config: { ...(own ?? base(path)), userAgent: `${user}/v1.33 (linux)` },
    });
    const t = this.#wiring.network ?? {};
    const network = await startNodeNetwork({
      nodeName: this.nodeName,
      nodeIP: this.nodeIP,
      podCIDR,
      bridge: c.cniBridge,
      clusterDNS: c.clusterDNS,
      clusterDomain: c.clusterDomain || 'cluster.local',
      resolvConf: c.resolvConf,
      ...(c.runProxy ? { proxy: access(wired.proxy, c.proxyKubeconfig, 'capstan-proxy') } : {}),
      ...(c.runClusterDNS ? { dns: access(wired.dns, c.clusterDNSKubeconfig, 'capstan-dns') } : {}),
      ...(c.runNetworkPolicy
        ? { networkPolicy: access(wired.networkPolicy, c.networkPolicyKubeconfig, 'capstan-netpol') }
        : {}),
      ...(c.runPodRoutes ? { podRoutes: access(undefined, '', 'capstan-routes') } : {}),
      tuning: t,
    });
    this.#closers.push(() => network.stop());
  }

  /**
   * Stops the agent's own loops and servers. Pods keep running: the runtime holds them and the
   * next agent adopts them.
   */
  async stop(): Promise<void> {
    for (const close of this.#closers.reverse()) {
      try {
        await close();
      } catch (err) {
        console.error(`agent: stopping: ${(err as Error).message}`);
      }
    }
    await this.#workers.stop();
    this.#statusManager?.stop();
    this.#volumes.stop();
    this.cri.close();
    await this.#client?.close();
  }
}
