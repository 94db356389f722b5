/**
 * Mirror pods (kubelet's mirror client and the mirror part of its syncPod): every static pod
 * (from the file or URL source) gets a pod of the same namespace and name in the API server,
 * read-only for everybody else, that shows it and carries its status:
 * - a copy of the static pod without its uid, with `kubernetes.io/config.mirror` set to the static
 *   pod's hash beside its `kubernetes.io/config.{source,hash,seen}` annotations, and a controller
 *   owner reference to this Node (the NodeRestriction admission requires both);
 * - made again when it goes, is being deleted, or its hash is not the static pod's (a changed
 *   manifest): the old one is deleted at once (grace 0, preconditioned on its uid);
 * - deleted (grace 0) when its static pod goes.
 * A pod of that name that is not a mirror is left alone, and logged. A refused write (a pod that
 * references an API object, a node not allowed) is logged with the server's words and retried
 * later; nothing here stops the agent.
 */
import { MIRROR_POD_ANNOTATION } from '../../api/annotations.js';
import type { Node, Pod, PodStatus } from '../../api/types/core-v1.js';
import { isForbidden, isNotFound, NODES, PODS, type Client } from '../../client/index.js';
import type { StatusManager } from './status-manager.js';

/** A pod in the API server that mirrors a static pod. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

const RETRY_MS = 10_000;
const RETRY_REFUSED_MS = 60_000;

function key(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

function hashOf(pod: Pod): string {
  return pod.metadata.annotations?.['kubernetes.io/config.hash'] ?? pod.metadata.uid ?? '';
}

/** Keeps the mirror pods of one node's static pods. */
export class MirrorPods {
  readonly #client: Client;
  readonly #node: string;
  readonly #statuses: StatusManager;
  readonly #wake: (uid: string) => void;
  /** ns/name → static pod. */
  readonly #static = new Map<string, Pod>();
  /** ns/name → its mirror as last seen. */
  readonly #mirrors = new Map<string, Pod>();
  readonly #running = new Map<string, { again: boolean }>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  readonly #logged = new Map<string, string>();
  #stopped = false;

  constructor(client: Client, nodeName: string, statuses: StatusManager, wake: (uid: string) => void) {
    this.#client = client;
    this.#node = nodeName;
    this.#statuses = statuses;
    this.#wake = wake;
  }

  /** A static pod the agent runs (new or changed). */
  staticPod(pod: Pod): void {
    this.#static.set(key(pod), pod);
    this.#ensure(key(pod));
  }

  /** A static pod went: its mirror goes too. */
  staticRemoved(uid: string): void {
    for (const [k, p] of this.#static) {
      if (p.metadata.uid !== uid) continue;
      this.#static.delete(k);
      this.#ensure(k);
    }
  }

  /** A mirror pod as the API server's pod source saw it. */
  observed(mirror: Pod): void {
    const k = key(mirror);
    this.#mirrors.set(k, mirror);
    const pod = this.#static.get(k);
    if (
      !pod ||
      mirror.metadata.deletionTimestamp ||
      mirror.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== hashOf(pod)
    )
      this.#ensure(k);
  }

  /** A pod the API server's pod source saw deleted (any pod: mirrors are picked by uid). */
  removed(uid: string): void {
    for (const [k, m] of this.#mirrors) {
      if (m.metadata.uid !== uid) continue;
      this.#mirrors.delete(k);
      this.#ensure(k);
    }
  }

  /** A static pod's new status: written to its mirror, if it has a current one. */
  status(pod: Pod, status: PodStatus): void {
    const mirror = this.#mirrors.get(key(pod));
    if (!mirror || mirror.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== hashOf(pod)) return;
    if (mirror.metadata.deletionTimestamp) return;
    this.#statuses.set(mirror, status);
  }

  stop(): void {
    this.#stopped = true;
    for (const t of this.#retries.values()) clearTimeout(t);
  }

  /** Reconciles one name; serialized per name, a request meanwhile runs it once more. */
  #ensure(k: string): void {
    if (this.#stopped) return;
    const running = this.#running.get(k);
    if (running) {
      running.again = true;
      return;
    }
    clearTimeout(this.#retries.get(k));
    this.#retries.delete(k);
    const state = { again: false };
    this.#running.set(k, state);
    void this.#reconcile(k)
      .then(
        () => this.#logged.delete(k),
        (err: unknown) => {
          const msg = `agent: mirror pod ${k}: ${(err as Error).message}`;
          if (this.#logged.get(k) !== msg) console.error(msg);
          this.#logged.set(k, msg);
          if (!this.#stopped)
            this.#retries.set(
              k,
              setTimeout(() => this.#ensure(k), isForbidden(err) ? RETRY_REFUSED_MS : RETRY_MS),
            );
        },
      )
      .finally(() => {
        this.#running.delete(k);
        if (state.again) this.#ensure(k);
      });
  }

  async #reconcile(k: string): Promise<void> {
    const pods = this.#client.resource<Pod>(PODS);
    const [namespace = '', name = ''] = k.split('/');
    const pod = this.#static.get(k);
    let current: Pod | undefined;
    try {
      current = await pods.get(name, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (current && !isMirrorPod(current)) {
      throw new Error(`a pod of that name that is not a mirror pod exists: no mirror pod for the static pod`);
    }
    const hash = pod ? hashOf(pod) : undefined;
    if (current) {
      const good =
        hash !== undefined &&
        current.metadata.annotations?.[MIRROR_POD_ANNOTATION] === hash &&
        !current.metadata.deletionTimestamp;
      if (good) {
        this.#mirrors.set(k, current);
        if (pod?.metadata.uid) this.#wake(pod.metadata.uid);
        return;
      }
      await pods
        .delete(name, {
          namespace,
          gracePeriodSeconds: 0,
          preconditions: { uid: current.metadata.uid ?? '' },
        })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      this.#mirrors.delete(k);
    }
    if (!pod || hash === undefined) return;
    const node = await this.#client.resource<Node>(NODES).get(this.#node);
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...meta } = pod.metadata;
    const created = await pods.create(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...meta,
          annotations: { ...(pod.metadata.annotations ?? {}), [MIRROR_POD_ANNOTATION]: hash },
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'Node',
              name: this.#node,
              uid: node.metadata.uid ?? '',
              controller: true,
            },
          ],
        },
        spec: pod.spec ?? {},
      },
      { namespace },
    );
    this.#mirrors.set(k, created);
    if (pod.metadata.uid) this.#wake(pod.metadata.uid);
  }
}
