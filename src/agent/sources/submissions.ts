/**
 * Pods submitted to the agent's own HTTP server (the spec's third manifest source; kube has no
 * such endpoint any more, so its shape is Capstan's, served by `server/manifests.ts`). Each
 * submission has a name and holds a Pod or a PodList, decoded and refused exactly as a static
 * pod file ({@link decodeManifest}, `kubernetes.io/config.source: http`, the uid hashed with
 * `agent:/manifests/<name>`); putting a submission again replaces its pods (unchanged ones keep
 * running), deleting it stops them. A submission holding a pod whose namespace and name another
 * pod already has (in it or in another submission) is refused whole, with kube's words for the
 * duplicate (kubelet's config merge keeps only the first). Submissions live in memory: a restarted agent has none, and
 * the pods they ran are cleaned up as orphans.
 */
import type { Pod } from '../../api/types/core-v1.js';
import { decodeManifest, dropDuplicateNames, ManifestError } from './manifest.js';
import type { StaticPodHandlers } from './static-files.js';

/** The names a submission may have (a DNS label). */
export const SUBMISSION_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The submitted pods, by submission. */
export class SubmissionSource {
  readonly #node: string;
  readonly #handlers: StaticPodHandlers;
  /** submission → its pods. */
  readonly #submissions = new Map<string, Pod[]>();

  constructor(nodeName: string, handlers: StaticPodHandlers) {
    this.#node = nodeName;
    this.#handlers = handlers;
  }

  /** Nothing to read: synced at once. */
  start(): void {
    this.#handlers.synced();
  }

  /**
   * Puts a submission: its pods replace what it held.
   * @throws ManifestError (or a YAML error) when kube would refuse the manifest; nothing changes then.
   */
  put(name: string, text: string): Pod[] {
    const pods = decodeManifest(text, this.#node, `agent:/manifests/${name}`, 'http');
    const others = [...this.#submissions].filter(([n]) => n !== name).flatMap(([, ps]) => ps);
    dropDuplicateNames([...others, ...pods], 'http', (_pod, message) => {
      throw new ManifestError(message);
    });
    const old = new Set((this.#submissions.get(name) ?? []).map((p) => p.metadata.uid ?? ''));
    const next = new Set(pods.map((p) => p.metadata.uid ?? ''));
    for (const uid of old) if (!next.has(uid)) this.#handlers.removed(uid);
    for (const pod of pods) if (!old.has(pod.metadata.uid ?? '')) this.#handlers.update(pod);
    this.#submissions.set(name, pods);
    return pods;
  }

  /** Deletes a submission and stops its pods; false when there was none. */
  delete(name: string): boolean {
    const pods = this.#submissions.get(name);
    if (!pods) return false;
    this.#submissions.delete(name);
    for (const p of pods) this.#handlers.removed(p.metadata.uid ?? '');
    return true;
  }

  /** Every submission with the names of its pods (`namespace/name`). */
  list(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [name, pods] of this.#submissions)
      out[name] = pods.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
    return out;
  }
}
