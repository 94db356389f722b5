/**
 * Notices container state changes without a polling floor (kubelet relists every second; CRI
 * container events are not in containerd 1.6). Two inputs:
 * - containerd's own event stream (`containerd.services.events.v1.Events/Subscribe` on the same
 *   socket as CRI), filtered to the `k8s.io` namespace's task events: a task that starts, exits
 *   or is OOM-killed wakes its pod at once;
 * - a relist every `relistMs` (default 5 s) as the safety net, which also re-subscribes after the
 *   stream breaks and reports runtime health.
 *
 * Events name containers, so the watcher keeps the container → pod map from the last relist;
 * an unknown container (just created) triggers an immediate relist.
 */
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { criTarget } from '../cri/client.js';
import { loadAgentSchema, CONTAINERD_EVENTS_PROTO } from '../cri/schema.js';
import type { PodRuntime, PodRuntimeState } from './runtime.js';

/** What the watcher reports. */
export interface WatcherHandlers {
  /** A pod's containers may have changed. */
  wake(uid: string): void;
  /** The result of every relist (every pod the runtime holds for the agent). */
  relisted(pods: Map<string, PodRuntimeState>): void;
  /** The runtime answered (true) or failed (false) the last relist. */
  health(ok: boolean, error?: unknown): void;
}

const TASK_TOPICS = ['/tasks/start', '/tasks/exit', '/tasks/oom', '/tasks/delete'];

/** The runtime watcher; `start()` once, `stop()` to end. */
export class RuntimeWatcher {
  readonly #runtime: PodRuntime;
  readonly #endpoint: string;
  readonly #handlers: WatcherHandlers;
  readonly #relistMs: number;
  readonly #root: protobuf.Root;
  #client: grpc.Client | undefined;
  #stream: grpc.ClientReadableStream<unknown> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #relisting: Promise<void> | undefined;
  #again = false;
  readonly #podOf = new Map<string, string>();
  #signatures = new Map<string, string>();

  constructor(runtime: PodRuntime, endpoint: string, handlers: WatcherHandlers, relistMs = 5000) {
    this.#runtime = runtime;
    this.#endpoint = endpoint;
    this.#handlers = handlers;
    this.#relistMs = relistMs;
    this.#root = loadAgentSchema(CONTAINERD_EVENTS_PROTO);
  }

  start(): void {
    this.#subscribe();
    this.relistSoon();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#stream?.cancel();
    this.#client?.close();
  }

  /** Relists now (coalesced with one in flight). */
  relistSoon(): void {
    if (this.#stopped) return;
    if (this.#relisting) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#relisting = this.#relist().finally(() => {
      this.#relisting = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.relistSoon();
      } else {
        this.#timer = setTimeout(() => this.relistSoon(), this.#relistMs);
      }
    });
  }

  async #relist(): Promise<void> {
    try {
      const pods = await this.#runtime.listPods();
      this.#handlers.health(true);
      const signatures = new Map<string, string>();
      this.#podOf.clear();
      for (const [uid, p] of pods) {
        for (const c of p.containers) this.#podOf.set(c.id, uid);
        signatures.set(
          uid,
          [
            ...p.sandboxes.map((s) => `${s.id}:${s.ready}`),
            ...p.containers.map((c) => `${c.id}:${c.state}`),
          ].join(','),
        );
      }
      for (const [uid, sig] of signatures) if (this.#signatures.get(uid) !== sig) this.#handlers.wake(uid);
      for (const uid of this.#signatures.keys()) if (!signatures.has(uid)) this.#handlers.wake(uid);
      this.#signatures = signatures;
      this.#handlers.relisted(pods);
      if (!this.#stream && !this.#stopped) this.#subscribe();
    } catch (err) {
      this.#handlers.health(false, err);
    }
  }

  #subscribe(): void {
    if (this.#stopped) return;
    this.#client ??= new grpc.Client(criTarget(this.#endpoint), grpc.credentials.createInsecure());
    const req = this.#root.lookupType('capstan.containerd.SubscribeRequest');
    const env = this.#root.lookupType('capstan.containerd.Envelope');
    const exit = this.#root.lookupType('capstan.containerd.TaskContainer');
    const filters = TASK_TOPICS.map((t) => `namespace==k8s.io,topic=="${t}"`);
    const stream = this.#client.makeServerStreamRequest(
      '/containerd.services.events.v1.Events/Subscribe',
      (arg: object) => Buffer.from(req.encode(req.fromObject(arg)).finish()),
      (buf: Buffer) => env.toObject(env.decode(buf), { bytes: Buffer, defaults: true }),
      { filters },
    );
    this.#stream = stream;
    stream.on('data', (e: { topic: string; event?: { value?: Buffer } }) => {
      const value = e.event?.value;
      if (!value) return;
      const { containerId } = exit.toObject(exit.decode(value)) as { containerId?: string };
      const uid = containerId ? this.#podOf.get(containerId) : undefined;
      if (uid) this.#handlers.wake(uid);
      else this.relistSoon();
    });
    const ended = (): void => {
      if (this.#stream === stream) this.#stream = undefined;
    };
    stream.on('error', ended);
    stream.on('end', ended);
  }
}
