/**
 * Static pods from `staticPodPath`: every `.yaml`, `.yml` or `.json` file of the directory (not
 * hidden), or the one file, each holding a Pod or a PodList ({@link decodeManifest}). The path is
 * read every `fileCheckFrequency` and, between those, soon after a change (an `fs.watch` on it,
 * debounced). A file that does not parse, or that kube refuses, is logged once with its path and
 * the reason, and skipped (as kubelet's periodic read does, its pods go); the other pods keep
 * running. A missing path is no error (kubelet waits
 * for it to appear). Two pods with the same namespace and name: the one of the first file (by
 * name) runs, the other is refused ({@link dropDuplicateNames}) and reported once through
 * `invalid` for as long as it stays.
 */
import { existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../api/types/core-v1.js';
import { decodeManifest } from './manifest.js';
import { SourceSnapshot } from './snapshot.js';

/** What a pod source reports. */
export interface StaticPodHandlers {
  update(pod: Pod): void;
  removed(uid: string): void;
  synced(): void;
  /** A pod refused after decoding (a duplicate name), with kube's message. */
  invalid(pod: Pod, message: string): void;
}

/** How long after a change event the path is read (editors write in several steps). */
const DEBOUNCE_MS = 100;

/** Reads a static pod path (see the module comment). */
export class StaticFileSource {
  readonly #path: string;
  readonly #node: string;
  readonly #everyMs: number;
  readonly #handlers: StaticPodHandlers;
  readonly #snapshot: SourceSnapshot;
  /** file → the error last logged for it. */
  readonly #warned = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #watcher: FSWatcher | undefined;

  constructor(path: string, nodeName: string, everyMs: number, handlers: StaticPodHandlers) {
    this.#path = path;
    this.#node = nodeName;
    this.#everyMs = everyMs;
    this.#handlers = handlers;
    this.#snapshot = new SourceSnapshot('file', handlers);
  }

  start(): void {
    this.#scan();
    this.#handlers.synced();
    this.#timer = setInterval(() => this.#scan(), this.#everyMs);
    this.#watch();
  }

  stop(): void {
    clearInterval(this.#timer);
    clearTimeout(this.#debounce);
    this.#watcher?.close();
  }

  /** Watches the path once it exists (the periodic scan retries). */
  #watch(): void {
    if (this.#watcher || !existsSync(this.#path)) return;
    try {
      this.#watcher = watch(this.#path, () => {
        clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => this.#scan(), DEBOUNCE_MS);
      });
      this.#watcher.on('error', () => {
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch (err) {
      console.error(`agent: watching static pod path ${this.#path}: ${(err as Error).message}`);
    }
  }

  #files(): string[] {
    if (!existsSync(this.#path)) return [];
    if (statSync(this.#path).isFile()) return [this.#path];
    return readdirSync(this.#path)
      .filter((f) => !f.startsWith('.') && /\.(ya?ml|json)$/.test(f))
      .sort()
      .map((f) => join(this.#path, f));
  }

  #scan(): void {
    this.#watch();
    let files: string[] = [];
    try {
      files = this.#files();
    } catch (err) {
      console.error(`agent: reading static pod path ${this.#path}: ${(err as Error).message}`);
      return;
    }
    const pods: Pod[] = [];
    for (const file of files) {
      try {
        pods.push(...decodeManifest(readFileSync(file, 'utf8'), this.#node, file, 'file'));
        this.#warned.delete(file);
      } catch (err) {
        const msg = (err as Error).message.split('\n')[0] ?? '';
        if (this.#warned.get(file) !== msg)
          console.error(`agent: could not process static pod manifest file ${file}: ${msg}; skipped`);
        this.#warned.set(file, msg);
      }
    }
    this.#snapshot.apply(pods);
  }
}
