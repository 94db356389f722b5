/**
 * The scrapes metrics are computed from: per node the last two answers of its agent's
 * `/metrics/resource`, taken when asked rather than on a timer (no work while nobody reads
 * metrics). A read wants a pair whose newest scrape is at most {@link RESOLUTION_MS} old and
 * whose window is at most {@link MAX_WINDOW_MS}: when the newest is older it scrapes again, and
 * when that leaves no usable older scrape (the first read, or one after a long quiet) it waits
 * {@link MIN_WINDOW_MS} and scrapes once more, so the first read answers in about a second and
 * later ones at once. Concurrent reads of one node share one refresh. A failed scrape is logged
 * and the node has no metrics until one succeeds (as metrics-server skips it).
 */
import { parseResourceMetrics, type NodeScrape } from './parse.js';

/** How old the newest scrape may be: metrics-server's default `--metric-resolution` (15 s). */
export const RESOLUTION_MS = 15_000;
/** The longest window between the two scrapes a rate is computed from. */
export const MAX_WINDOW_MS = 60_000;
/** The wait between the two scrapes of a first read. */
export const MIN_WINDOW_MS = 1_000;

/** GETs a path of a node's agent and answers the body (throws on failure). */
export type AgentFetch = (nodeName: string, path: string) => Promise<string>;

interface NodeState {
  prev?: NodeScrape;
  last?: NodeScrape;
  refresh?: Promise<void> | undefined;
}

/** The two latest scrapes of a node. */
export interface ScrapePair {
  readonly prev: NodeScrape;
  readonly last: NodeScrape;
}

/** Scrapes agents on demand and keeps each node's last two scrapes. */
export class ResourceScraper {
  readonly #fetch: AgentFetch;
  readonly #log: (message: string) => void;
  readonly #now: () => number;
  readonly #nodes = new Map<string, NodeState>();
  readonly #minWindowMs: number;

  constructor(
    fetch: AgentFetch,
    log: (message: string) => void,
    opts: { now?: () => number; minWindowMs?: number } = {},
  ) {
    this.#fetch = fetch;
    this.#log = log;
    this.#now = opts.now ?? Date.now;
    this.#minWindowMs = opts.minWindowMs ?? MIN_WINDOW_MS;
  }

  async #scrape(node: string, s: NodeState): Promise<boolean> {
    try {
      const body = await this.#fetch(node, '/metrics/resource');
      const scrape = parseResourceMetrics(body, this.#now());
      if (s.last) s.prev = s.last;
      s.last = scrape;
      return true;
    } catch (err) {
      this.#log(`metrics: scraping node ${node}: ${(err as Error).message}`);
      return false;
    }
  }

  #usable(s: NodeState): boolean {
    const now = this.#now();
    return (
      s.last !== undefined &&
      s.prev !== undefined &&
      now - s.last.at < RESOLUTION_MS &&
      s.last.at - s.prev.at <= MAX_WINDOW_MS
    );
  }

  /** The node's two latest scrapes, refreshed as the module says; undefined when it has none. */
  async pair(node: string): Promise<ScrapePair | undefined> {
    let s = this.#nodes.get(node);
    if (!s) this.#nodes.set(node, (s = {}));
    const state = s;
    if (!this.#usable(state)) {
      state.refresh ??= (async () => {
        if (!state.last || this.#now() - state.last.at >= RESOLUTION_MS) {
          if (!(await this.#scrape(node, state))) return;
        }
        if (!state.prev || (state.last && state.last.at - state.prev.at > MAX_WINDOW_MS)) {
          await new Promise((r) => setTimeout(r, this.#minWindowMs));
          await this.#scrape(node, state);
        }
      })().finally(() => {
        state.refresh = undefined;
      });
      await state.refresh;
    }
    return state.prev && state.last ? { prev: state.prev, last: state.last } : undefined;
  }

  /** Forgets nodes not in `names` (deleted nodes). */
  retain(names: ReadonlySet<string>): void {
    for (const n of this.#nodes.keys()) if (!names.has(n)) this.#nodes.delete(n);
  }
}
