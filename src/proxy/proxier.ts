/**
 * The Service proxy as a client of the API: Services and EndpointSlices through shared
 * informers; every change marks the state dirty, and a sync (at most one per
 * `minSyncPeriodMs`, and at least every `syncPeriodMs`) renders the ruleset and applies the
 * difference from the last applied one with one `nft -f -` transaction. A failed apply makes
 * the next sync replace the whole table. `close()` removes the table when asked (test
 * clusters), so nothing the proxy wrote outlives it.
 */
import { spawn } from 'node:child_process';
import {
  Client,
  ENDPOINT_SLICES,
  SERVICES,
  SharedInformerFactory,
  type ClientConfig,
} from '../client/index.js';
import type { Service } from '../api/types/core-v1.js';
import type { EndpointSlice } from '../api/types/discovery-v1.js';
import { proxiedPorts, serviceKeyOfSlice, type ProxiedPort } from './model.js';
import { DEFAULT_TABLE, renderRuleset, transaction, type Ruleset, type RulesetOptions } from './nftables.js';

/** Options of {@link startProxy}. */
export interface ProxyOptions extends RulesetOptions {
  /** This node's name (`--hostname-override`), for the Local traffic policies. */
  readonly nodeName: string;
  /** The nft command, its arguments before `-f -` (default `['nft']`; tests prefix `ip netns exec`). */
  readonly nftCommand?: readonly string[];
  /** Least time between syncs (kube-proxy's `minSyncPeriod`, 1 s). */
  readonly minSyncPeriodMs?: number;
  /** Full resync period (kube-proxy's `syncPeriod`, 30 s). */
  readonly syncPeriodMs?: number;
  readonly log?: (line: string) => void;
}

/** A running proxy. */
export interface Proxy {
  /** Resolves after the next sync that starts after this call (tests). */
  synced(): Promise<void>;
  /** Figures of the last sync. */
  readonly lastSync: { readonly at: number; readonly ms: number; readonly commands: number } | undefined;
  /** Successful syncs so far, and their total time in ms (the sync-duration metric's count and sum). */
  readonly syncs: { readonly count: number; readonly totalMs: number };
  /** Stops; with `removeRules`, deletes the proxy's table. */
  close(opts?: { removeRules?: boolean }): Promise<void>;
}

/** Runs `cmd` with `input` on stdin; rejects with its stderr on a non-zero exit. */
export function runNft(cmd: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const [bin = 'nft', ...args] = cmd;
    const child = spawn(bin, [...args, '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`nft exited ${String(code)}: ${err.trim().slice(0, 2000)}`)),
    );
    child.stdin.end(input);
  });
}

/** Starts the informers and syncs once they are synced. */
export async function startProxy(config: ClientConfig, opts: ProxyOptions): Promise<Proxy> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const nft = opts.nftCommand ?? ['nft'];
  const minPeriod = opts.minSyncPeriodMs ?? 1000;
  const client = new Client({ ...config, userAgent: config.userAgent ?? 'capstan-proxy' });
  const factory = new SharedInformerFactory(client, { log: (m, e) => log(`proxy: ${m}: ${String(e)}`) });
  const services = new Map<string, Service>();
  const slices = new Map<string, Map<string, EndpointSlice>>();

  let applied: Ruleset | undefined;
  let lastSync: Proxy['lastSync'];
  const syncs = { count: 0, totalMs: 0 };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastStart = 0;
  let closed = false;
  let waiters: (() => void)[] = [];

  const sync = async (): Promise<void> => {
    lastStart = Date.now();
    const done = waiters;
    waiters = [];
    const ports: ProxiedPort[] = [];
    for (const [key, svc] of services) ports.push(...proxiedPorts(svc, slices.get(key), opts.nodeName));
    const next = renderRuleset(ports, opts);
    const tx = transaction(applied, next);
    try {
      if (tx !== '') await runNft(nft, tx);
      applied = next;
      lastSync = {
        at: Date.now(),
        ms: Date.now() - lastStart,
        commands: tx === '' ? 0 : tx.split('\n').length - 1,
      };
      syncs.count++;
      syncs.totalMs += lastSync.ms;
    } catch (err) {
      applied = undefined; // the table's state is unknown: the next sync replaces it
      log(
        `proxy: sync failed, retrying with a full sync: ${err instanceof Error ? err.message : String(err)}`,
      );
      schedule();
    } finally {
      for (const w of done) w();
    }
  };
  const schedule = (): void => {
    if (closed || timer !== undefined) return;
    const wait = Math.max(0, lastStart + minPeriod - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      if (running !== undefined) {
        // a sync is under way: run again after it
        void running.then(schedule);
        return;
      }
      running = sync().finally(() => (running = undefined));
    }, wait);
  };

  factory.informer<Service>(SERVICES).addHandler({
    add: (s) => {
      services.set(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, s);
      schedule();
    },
    update: (_o, s) => {
      services.set(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, s);
      schedule();
    },
    delete: (s) => {
      services.delete(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`);
      schedule();
    },
  });
  const setSlice = (s: EndpointSlice): void => {
    const key = serviceKeyOfSlice(s);
    if (key === undefined) return;
    let m = slices.get(key);
    if (m === undefined) slices.set(key, (m = new Map<string, EndpointSlice>()));
    m.set(s.metadata.name ?? '', s);
    schedule();
  };
  factory.informer<EndpointSlice>(ENDPOINT_SLICES).addHandler({
    add: setSlice,
    update: (_o, s) => setSlice(s),
    delete: (s) => {
      const key = serviceKeyOfSlice(s);
      if (key === undefined) return;
      slices.get(key)?.delete(s.metadata.name ?? '');
      if (slices.get(key)?.size === 0) slices.delete(key);
      schedule();
    },
  });
  factory.start();
  await factory.waitForSync();
  running = sync().finally(() => (running = undefined));
  await running;
  // The periodic sync renders again; its transaction is empty unless something was missed.
  const resync = setInterval(schedule, opts.syncPeriodMs ?? 30_000);

  return {
    synced: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule();
      }),
    get lastSync() {
      return lastSync;
    },
    get syncs() {
      return { ...syncs };
    },
    close: async ({ removeRules = false } = {}) => {
      closed = true;
      clearInterval(resync);
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await factory.stop();
      await client.close();
      if (removeRules) {
        const t = opts.table ?? DEFAULT_TABLE;
        await runNft(nft, `add table ip ${t}\ndelete table ip ${t}\n`);
      }
    },
  };
}
