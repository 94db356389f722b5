/**
 * Static pods from `--manifest-url` (`staticPodURL`), as kubelet's HTTP source: a GET with the
 * `--manifest-url-header` headers every `httpCheckFrequency`, answered by a Pod or a PodList
 * ({@link decodeManifest}, source `http`). A read that fails (no answer within 10 s, a status
 * other than 200, a body kube would refuse) is logged once per distinct error and changes
 * nothing: the pods of the last good read keep running. An empty body means no pods (as kubelet,
 * which also logs it). The source counts as synced after its first good read, so the agent's
 * orphan clean-up waits for it, as kubelet's does. Of two pods with the same namespace and name,
 * the first runs and the other is refused, reported through `invalid` once while it stays.
 */
import type { Pod } from '../../api/types/core-v1.js';
import { decodeManifest } from './manifest.js';
import { SourceSnapshot } from './snapshot.js';
import type { StaticPodHandlers } from './static-files.js';

/** kubelet's HTTP source client timeout. */
const TIMEOUT_MS = 10_000;

/** Polls a manifest URL (see the module comment). */
export class UrlSource {
  readonly #url: string;
  readonly #headers: Headers;
  readonly #node: string;
  readonly #everyMs: number;
  readonly #handlers: StaticPodHandlers;
  readonly #snapshot: SourceSnapshot;
  #lastError = '';
  #synced = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #abort: AbortController | undefined;

  constructor(
    url: string,
    headers: Readonly<Record<string, readonly string[]>>,
    nodeName: string,
    everyMs: number,
    handlers: StaticPodHandlers,
  ) {
    this.#url = url;
    this.#headers = new Headers();
    for (const [k, vs] of Object.entries(headers)) for (const v of vs) this.#headers.append(k, v);
    this.#node = nodeName;
    this.#everyMs = everyMs;
    this.#handlers = handlers;
    this.#snapshot = new SourceSnapshot('http', handlers);
  }

  start(): void {
    void this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort?.abort();
  }

  async #poll(): Promise<void> {
    try {
      this.#apply(await this.#read());
      this.#lastError = '';
    } catch (err) {
      const msg = `agent: reading static pods from ${this.#url}: ${(err as Error).message.split('\n')[0] ?? ''}`;
      if (!this.#stopped && msg !== this.#lastError) console.error(msg);
      this.#lastError = msg;
    }
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#poll(), this.#everyMs);
  }

  async #read(): Promise<Pod[]> {
    this.#abort = new AbortController();
    const timer = setTimeout(
      () => this.#abort?.abort(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)),
      TIMEOUT_MS,
    );
    try {
      const res = await fetch(this.#url, { headers: this.#headers, signal: this.#abort.signal });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${res.status} ${res.statusText}`);
      if (body.trim() === '') {
        console.error(`agent: zero-length data received from ${this.#url}`);
        return [];
      }
      return decodeManifest(body, this.#node, this.#url, 'http');
    } catch (err) {
      const reason = this.#abort.signal.reason as unknown;
      throw reason instanceof Error && this.#abort.signal.aborted ? reason : err;
    } finally {
      clearTimeout(timer);
    }
  }

  #apply(pods: Pod[]): void {
    this.#snapshot.apply(pods);
    if (!this.#synced) {
      this.#synced = true;
      this.#handlers.synced();
    }
  }
}
