/**
 * The API server as a pod source: the pods bound to this node (`spec.nodeName=<node>`), listed
 * then watched from the list's resourceVersion; a broken or expired watch relists and diffs, so
 * a pod deleted meanwhile still reaches `removed`. (A shared informer from src/client replaces
 * this loop once the library has one.)
 */
import type { Pod } from '../../api/types/core-v1.js';
import { PODS, type Client } from '../../client/index.js';

/** What the source reports. */
export interface PodSourceHandlers {
  update(pod: Pod): void;
  removed(uid: string): void;
  /** The first list arrived (orphan clean-up may run). */
  synced(): void;
}

/** Lists and watches this node's pods until `stop()`. */
export class ApiPodSource {
  readonly #client: Client;
  readonly #node: string;
  readonly #handlers: PodSourceHandlers;
  readonly #known = new Map<string, Pod>();
  #stopped = false;
  #closeWatch: (() => void) | undefined;
  #done: Promise<void> | undefined;

  constructor(client: Client, nodeName: string, handlers: PodSourceHandlers) {
    this.#client = client;
    this.#node = nodeName;
    this.#handlers = handlers;
  }

  /** The pods the API server has for this node, as last seen. */
  pods(): Pod[] {
    return [...this.#known.values()];
  }

  start(): void {
    this.#done = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#closeWatch?.();
    await this.#done;
  }

  async #run(): Promise<void> {
    const pods = this.#client.resource<Pod>(PODS);
    const fieldSelector = `spec.nodeName=${this.#node}`;
    let first = true;
    let delay = 500;
    while (!this.#stopped) {
      try {
        const list = await pods.list({ fieldSelector });
        const seen = new Set<string>();
        for (const p of list.items) {
          const uid = p.metadata.uid ?? '';
          seen.add(uid);
          this.#known.set(uid, p);
          this.#handlers.update(p);
        }
        for (const uid of [...this.#known.keys()]) {
          if (!seen.has(uid)) {
            this.#known.delete(uid);
            this.#handlers.removed(uid);
          }
        }
        if (first) {
          first = false;
          this.#handlers.synced();
        }
        delay = 500;
        const watch = pods.watch({
          fieldSelector,
          resourceVersion: list.metadata.resourceVersion ?? '',
          allowWatchBookmarks: true,
        });
        this.#closeWatch = () => watch.close();
        if (this.#stopped) watch.close();
        for await (const ev of watch) {
          const uid = ev.object.metadata.uid ?? '';
          if (ev.type === 'BOOKMARK') continue;
          if (ev.type === 'DELETED') {
            this.#known.delete(uid);
            this.#handlers.removed(uid);
          } else {
            this.#known.set(uid, ev.object);
            this.#handlers.update(ev.object);
          }
        }
      } catch (err) {
        if (this.#stopped) break;
        console.error(
          `agent: pods watch for node ${this.#node}: ${(err as Error).message}; relisting in ${delay} ms`,
        );
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }
}
