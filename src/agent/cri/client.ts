/**
 * A small typed client of CRI v1 (RuntimeService and ImageService) over gRPC on a Unix socket,
 * built on @grpc/grpc-js with protobufjs and the CRI schema of `./schema.ts`.
 *
 * Every call has a deadline (2 min by default, 10 min for image pulls, the command's timeout plus
 * a margin for ExecSync). Failures are {@link CriError}s carrying the gRPC status code, so callers
 * branch on `code` (NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED...), never on messages.
 *
 * @example
 * ```ts
 * const cri = new CriClient('unix:///run/containerd/containerd.sock');
 * const { runtimeName } = await cri.version();
 * cri.close();
 * ```
 */
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { loadAgentSchema, CRI_PROTO } from './schema.js';
import type * as T from './types.js';
import type { CriContainerStats, CriPodSandboxStats } from './stats-types.js';

/** An error from the runtime: the call, the gRPC status code and the runtime's message. */
export class CriError extends Error {
  readonly code: grpc.status;
  readonly method: string;
  constructor(method: string, code: grpc.status, details: string, options?: ErrorOptions) {
    super(`CRI ${method}: ${grpc.status[code] ?? code}: ${details}`, options);
    this.name = 'CriError';
    this.code = code;
    this.method = method;
  }
}

/** True when the error says the object is not there (a NotFound from the runtime). */
export function isCriNotFound(err: unknown): boolean {
  return err instanceof CriError && err.code === grpc.status.NOT_FOUND;
}

const DEFAULT_DEADLINE_MS = 120_000;
const PULL_DEADLINE_MS = 600_000;

const TO_OBJECT: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
};

/** Normalizes a `unix:///path` or bare path endpoint into grpc-js's target form. */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix://${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  return endpoint;
}

/** The CRI client. One gRPC channel per instance; `close()` releases it. */
export class CriClient {
  readonly #client: grpc.Client;
  readonly #root: protobuf.Root;

  constructor(endpoint: string) {
    this.#root = loadAgentSchema(CRI_PROTO);
    this.#client = new grpc.Client(criTarget(endpoint), grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
  }

  close(): void {
    this.#client.close();
  }

  #call<R>(
    service: 'RuntimeService' | 'ImageService',
    method: string,
    request: object,
    deadlineMs = DEFAULT_DEADLINE_MS,
  ): Promise<R> {
    const svc = this.#root.lookupService(`runtime.v1.${service}`);
    const m = svc.methods[method];
    if (!m) throw new Error(`CRI: no method ${service}.${method}`);
    const reqType = this.#root.lookupType(m.requestType);
    const resType = this.#root.lookupType(m.responseType);
    const path = `/runtime.v1.${service}/${method}`;
    return new Promise<R>((resolve, reject) => {
      this.#client.makeUnaryRequest(
        path,
        (arg: object) => Buffer.from(reqType.encode(reqType.fromObject(arg)).finish()),
        (buf: Buffer) => resType.toObject(resType.decode(buf), TO_OBJECT) as R,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + deadlineMs },
        (e, value) => {
          if (e) reject(new CriError(method, e.code, e.details, { cause: e }));
          else resolve(value as R);
        },
      );
    });
  }

  #rt<R>(method: string, request: object, deadlineMs?: number): Promise<R> {
    return this.#call<R>('RuntimeService', method, request, deadlineMs);
  }

  version(): Promise<T.VersionResponse> {
    return this.#rt('Version', { version: 'v1' });
  }

  /** Runtime conditions (RuntimeReady, NetworkReady). */
  async status(): Promise<T.RuntimeCondition[]> {
    const r = await this.#rt<{ status?: { conditions: T.RuntimeCondition[] } }>('Status', {});
    return r.status?.conditions ?? [];
  }

  async runPodSandbox(config: T.PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    const r = await this.#rt<{ podSandboxId: string }>('RunPodSandbox', { config, runtimeHandler });
    return r.podSandboxId;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.#rt('StopPodSandbox', { podSandboxId });
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.#rt('RemovePodSandbox', { podSandboxId });
  }

  async podSandboxStatus(podSandboxId: string): Promise<T.PodSandboxStatus> {
    const r = await this.#rt<{ status: T.PodSandboxStatus }>('PodSandboxStatus', { podSandboxId });
    return r.status;
  }

  async listPodSandbox(filter?: T.PodSandboxFilter): Promise<T.PodSandbox[]> {
    const r = await this.#rt<{ items: T.PodSandbox[] }>('ListPodSandbox', filter ? { filter } : {});
    return r.items;
  }

  async createContainer(
    podSandboxId: string,
    config: T.ContainerConfig,
    sandboxConfig: T.PodSandboxConfig,
  ): Promise<string> {
    const r = await this.#rt<{ containerId: string }>('CreateContainer', {
      podSandboxId,
      config,
      sandboxConfig,
    });
    return r.containerId;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.#rt('StartContainer', { containerId });
  }

  /** Stops with `timeoutSeconds` of grace (SIGTERM, then SIGKILL); the deadline allows for it. */
  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.#rt('StopContainer', { containerId, timeout: timeoutSeconds }, (timeoutSeconds + 120) * 1000);
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.#rt('RemoveContainer', { containerId });
  }

  async listContainers(filter?: T.ContainerFilter): Promise<T.Container[]> {
    const r = await this.#rt<{ containers: T.Container[] }>('ListContainers', filter ? { filter } : {});
    return r.containers;
  }

  async containerStatus(containerId: string): Promise<T.ContainerStatus> {
    const r = await this.#rt<{ status: T.ContainerStatus }>('ContainerStatus', { containerId });
    return r.status;
  }

  /** Changes a container's cgroup limits in place (an in-place pod resize). */
  async updateContainerResources(containerId: string, linux: T.LinuxContainerResources): Promise<void> {
    await this.#rt('UpdateContainerResources', { containerId, linux });
  }

  /** Runs a command to completion; `timeoutSeconds` 0 means no limit on the runtime's side. */
  execSync(containerId: string, cmd: string[], timeoutSeconds = 0): Promise<T.ExecSyncResponse> {
    const deadline = timeoutSeconds > 0 ? (timeoutSeconds + 10) * 1000 : DEFAULT_DEADLINE_MS;
    return this.#rt('ExecSync', { containerId, cmd, timeout: timeoutSeconds }, deadline);
  }

  /** Prepares an exec session; answers the runtime streaming server's URL. */
  async exec(req: T.ExecRequest): Promise<string> {
    return (await this.#rt<{ url: string }>('Exec', req)).url;
  }

  /** Prepares an attach session; answers the runtime streaming server's URL. */
  async attach(req: {
    containerId: string;
    stdin?: boolean;
    tty?: boolean;
    stdout?: boolean;
    stderr?: boolean;
  }): Promise<string> {
    return (await this.#rt<{ url: string }>('Attach', req)).url;
  }

  /** Prepares a port-forward session to a sandbox; answers the streaming server's URL. */
  async portForward(podSandboxId: string, port: number[] = []): Promise<string> {
    return (await this.#rt<{ url: string }>('PortForward', { podSandboxId, port })).url;
  }

  /** Stats of the running containers (CRI `ListContainerStats`), by filter. */
  async listContainerStats(filter?: {
    podSandboxId?: string;
    labelSelector?: Record<string, string>;
  }): Promise<CriContainerStats[]> {
    const r = await this.#rt<{ stats: CriContainerStats[] }>('ListContainerStats', filter ? { filter } : {});
    return r.stats;
  }

  /** Stats of the pod sandboxes (CRI `ListPodSandboxStats`), by filter. */
  async listPodSandboxStats(filter?: {
    id?: string;
    labelSelector?: Record<string, string>;
  }): Promise<CriPodSandboxStats[]> {
    const r = await this.#rt<{ stats: CriPodSandboxStats[] }>(
      'ListPodSandboxStats',
      filter ? { filter } : {},
    );
    return r.stats;
  }

  async listImages(): Promise<T.Image[]> {
    const r = await this.#call<{ images: T.Image[] }>('ImageService', 'ListImages', {});
    return r.images;
  }

  /** The image, or undefined when the runtime does not have it. */
  async imageStatus(image: string): Promise<T.Image | undefined> {
    const r = await this.#call<{ image?: T.Image | null }>('ImageService', 'ImageStatus', {
      image: { image },
    });
    return r.image && r.image.id ? r.image : undefined;
  }

  /** Pulls an image; answers its image reference (the digest the runtime stored it under). */
  async pullImage(image: string, auth?: T.AuthConfig, sandboxConfig?: T.PodSandboxConfig): Promise<string> {
    const r = await this.#call<{ imageRef: string }>(
      'ImageService',
      'PullImage',
      { image: { image }, ...(auth ? { auth } : {}), ...(sandboxConfig ? { sandboxConfig } : {}) },
      PULL_DEADLINE_MS,
    );
    return r.imageRef;
  }
}
