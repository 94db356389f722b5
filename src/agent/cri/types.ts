/**
 * The parts of CRI v1 (`proto/cri/api.proto`, package `runtime.v1`) the agent uses, as the plain
 * objects protobufjs reads and writes: field names in camelCase, enums as their names, 64-bit
 * integers read back as decimal strings (timestamps are nanoseconds since the epoch).
 * Input fields are optional as in proto3: an absent field is its zero value on the wire.
 */

export type Labels = Record<string, string>;

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface PortMapping {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort?: number;
  hostIp?: string;
}

export interface NamespaceOption {
  network?: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
  pid?: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
  ipc?: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
  targetId?: string;
}

export interface SecurityProfile {
  profileType?: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhostRef?: string;
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  runAsUser?: { value: number };
  runAsGroup?: { value: number };
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  privileged?: boolean;
  seccomp?: SecurityProfile;
}

export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: DNSConfig;
  portMappings?: PortMapping[];
  labels?: Labels;
  annotations?: Labels;
  linux?: {
    cgroupParent?: string;
    securityContext?: LinuxSandboxSecurityContext;
    sysctls?: Labels;
  };
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

export interface LinuxContainerSecurityContext {
  capabilities?: { addCapabilities?: string[]; dropCapabilities?: string[] };
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  runAsUser?: { value: number };
  runAsGroup?: { value: number };
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  noNewPrivs?: boolean;
  seccomp?: SecurityProfile;
}

export interface ContainerConfig {
  metadata: { name: string; attempt?: number };
  image: { image: string; userSpecifiedImage?: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: Labels;
  annotations?: Labels;
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
}

export type ContainerState =
  'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

/** A sandbox as ListPodSandbox returns it. */
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: string;
  labels: Labels;
  annotations: Labels;
}

/** A container as ListContainers returns it. */
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number };
  image?: { image: string };
  imageRef: string;
  state: ContainerState;
  createdAt: string;
  labels: Labels;
  annotations: Labels;
}

export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number };
  state: ContainerState;
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  image?: { image: string };
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  logPath: string;
  /** The container's mounts, as created. */
  mounts?: Mount[];
  /** The container's current cgroup settings, where the runtime reports them. */
  resources?: { linux?: LinuxContainerResources | null } | null;
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: string;
  network?: { ip: string; additionalIps: { ip: string }[] };
  labels: Labels;
  annotations: Labels;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: Labels;
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  labelSelector?: Labels;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: string;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/** Streaming requests (Exec, Attach) answer a URL on the runtime's streaming server. */
export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}
