/**
 * The resources the agent has allocated to each pod's containers, kept on disk as kubelet keeps
 * its `allocated_pods_state` checkpoint: so a restarted agent admits and creates containers with
 * what it had accepted, and a resize still pending (Infeasible or Deferred) when it stopped stays
 * pending instead of being taken without the fit check.
 *
 * One JSON file under the agent's root dir, `{"version":1,"pods":{uid:{container:resources}}}`,
 * rewritten whole (a temporary file renamed over it) on each change: a change is an admission, an
 * accepted resize or a pod leaving the node, a few per pod. A missing or unreadable file is an
 * empty checkpoint (the log says why when it is unreadable).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ResourceRequirements } from '../../api/types/core-v1.js';

/** Container name → its allocated resources. */
export type Allocation = ReadonlyMap<string, ResourceRequirements | undefined>;

/** Where allocations are kept between agent runs. */
export interface AllocationStore {
  get(uid: string): Allocation | undefined;
  set(uid: string, allocation: Allocation): void;
  delete(uid: string): void;
  /** Forgets every pod but `uids`. */
  retain(uids: ReadonlySet<string>): void;
}

/** The checkpoint's file name under the agent's root dir, kubelet's. */
export const CHECKPOINT_FILE = 'allocated_pods_state';

interface Saved {
  readonly version: 1;
  readonly pods: Record<string, Record<string, ResourceRequirements | null>>;
}

/** The allocations in `file`. */
export class AllocationCheckpoint implements AllocationStore {
  readonly #file: string;
  readonly #pods = new Map<string, Allocation>();

  constructor(file: string) {
    this.#file = file;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // no checkpoint yet
    }
    try {
      const saved = JSON.parse(text) as Saved;
      for (const [uid, containers] of Object.entries(saved.pods ?? {}))
        this.#pods.set(uid, new Map(Object.entries(containers).map(([c, r]) => [c, r ?? undefined])));
    } catch (err) {
      console.error(`agent: ignoring the allocation checkpoint ${file}: ${(err as Error).message}`);
    }
  }

  get(uid: string): Allocation | undefined {
    return this.#pods.get(uid);
  }

  set(uid: string, allocation: Allocation): void {
    this.#pods.set(uid, new Map(allocation));
    this.#save();
  }

  delete(uid: string): void {
    if (this.#pods.delete(uid)) this.#save();
  }

  retain(uids: ReadonlySet<string>): void {
    let changed = false;
    for (const uid of [...this.#pods.keys()]) if (!uids.has(uid)) changed = this.#pods.delete(uid) || changed;
    if (changed) this.#save();
  }

  #save(): void {
    const pods: Saved['pods'] = {};
    for (const [uid, allocation] of this.#pods)
      pods[uid] = Object.fromEntries([...allocation].map(([c, r]) => [c, r ?? null]));
    const saved: Saved = { version: 1, pods };
    const temporary = `${this.#file}.tmp`;
    try {
      mkdirSync(dirname(this.#file), { recursive: true });
      writeFileSync(temporary, JSON.stringify(saved));
      renameSync(temporary, this.#file);
    } catch (err) {
      console.error(`agent: writing the allocation checkpoint ${this.#file}: ${(err as Error).message}`);
    }
  }
}
