/**
 * The Service proxy as a client of the API: Services and EndpointSlices through shared
 * informers. Every change marks its Service dirty; a sync (at most one per `minSyncPeriodMs`,
 * and at least every `syncPeriodMs`) renders only the dirty Services and applies a partial
 * `nft -f -` transaction that touches only their chains and map elements. A full sync, which
 * lists the kernel's table and converges all of it, runs first, after any failed sync, at
 * least every `fullSyncPeriodMs` (kube-proxy's hour) and on {@link Proxy.resync}; a failed
 * full sync makes the next one rebuild the table from nothing. `close()` removes the table
 * when asked (test clusters), so nothing the proxy wrote outlives it.
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
import { proxiedPorts, serviceKeyOfSlice } from './model.js';
import {
  DEFAULT_TABLE,
  ProxyTable,
  parseListing,
  renderService,
  type Plan,
  type RulesetOptions,
  type ServiceRules,
  type TableListing,
} from './nftables.js';

/** Options of {@link startProxy}. */
export interface ProxyOptions extends RulesetOptions {
  /** This node's name (`--hostname-override`), for the Local traffic policies. */
  readonly nodeName: string;
  /** The nft command, its arguments before `-f -` (default `['nft']`; tests prefix `ip netns exec`). */
  readonly nftCommand?: readonly string[];
  /** Least time between syncs (kube-proxy's `minSyncPeriod`, 1 s). */
  readonly minSyncPeriodMs?: number;
  /** Period of the sync that runs even without changes (kube-proxy's `syncPeriod`, 30 s). */
  readonly syncPeriodMs?: number;
  /** Longest time between full syncs (kube-proxy's `FullSyncPeriod`, 1 h). */
  readonly fullSyncPeriodMs?: number;
  readonly log?: (line: string) => void;
}

/** Count and total time (ms) of successful syncs of one kind. */
export interface SyncFigures {
  readonly count: number;
  readonly totalMs: number;
}

/** A running proxy. */
export interface Proxy {
  /** Resolves after the next sync that starts after this call (tests). */
  synced(): Promise<void>;
  /** Runs a full sync now (or after the one under way), and resolves after it. */
  resync(): Promise<void>;
  /** Figures of the last sync. */
  readonly lastSync:
    | { readonly at: number; readonly ms: number; readonly commands: number; readonly full: boolean }
    | undefined;
  /** Successful syncs so far: all, full and partial (the sync-duration metrics' counts and sums). */
  readonly syncs: SyncFigures & { readonly full: SyncFigures; readonly partial: SyncFigures };
  /** Stops; with `removeRules`, deletes the proxy's table. */
  close(opts?: { removeRules?: boolean }): Promise<void>;
}

/**
 * Runs `cmd` with `input` on stdin (and `args` after `cmd`'s own); resolves with its stdout,
 * rejects with the command line, its exit status and stderr. For the host's network tools (nft, ip).
 */
export function runCommand(cmd: readonly string[], args: readonly string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const [bin = 'nft', ...pre] = cmd;
    const child = spawn(bin, [...pre, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(
            new Error(`${[bin, ...args].join(' ')} exited ${String(code)}: ${err.trim().slice(0, 2000)}`),
          ),
    );
    // A command that exits without reading its input (an nft that refused its arguments, or a
    // `list`) closes the pipe: that EPIPE is not the outcome, the exit status above is. Unheard,
    // it would be an uncaught error that ends the process.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Runs `cmd -f -` with `input` on stdin; rejects with its stderr on a non-zero exit. */
export async function runNft(cmd: readonly string[], input: string): Promise<void> {
  await runCommand(cmd, ['-f', '-'], input);
}

/**
 * Deletes the nftables table `ip <name>` when it exists: one transaction that adds it (a no-op
 * when present) and deletes it, so there is nothing to list first. Only names Capstan made come here.
 */
export async function deleteNftTable(name: string, cmd: readonly string[] = ['nft']): Promise<void> {
  await runNft(cmd, `add table ip ${name}\ndelete table ip ${name}\n`);
}

/** The chains and sets of the proxy's table in the kernel (undefined: no such table). */
async function listTable(cmd: readonly string[], table: string): Promise<TableListing | undefined> {
  const [chains, sets] = await Promise.all([
    runCommand(cmd, ['-j', 'list', 'chains', 'ip'], ''),
    runCommand(cmd, ['-j', '-t', 'list', 'sets', 'ip'], ''),
  ]);
  return parseListing(table, chains, sets);
}

const keyOf = (o: { metadata: { namespace?: string; name?: string } }): string =>
  `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** Starts the informers and syncs once they are synced. */
export async function startProxy(config: ClientConfig, opts: ProxyOptions): Promise<Proxy> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const nft = opts.nftCommand ?? ['nft'];
  const minPeriod = opts.minSyncPeriodMs ?? 1000;
  const fullPeriod = opts.fullSyncPeriodMs ?? 3_600_000;
  const client = new Client({ ...config, userAgent: config.userAgent ?? 'capstan-proxy' });
  const factory = new SharedInformerFactory(client, { log: (m, e) => log(`proxy: ${m}: ${String(e)}`) });
  const services = new Map<string, Service>();
  const slices = new Map<string, Map<string, EndpointSlice>>();
  const table = new ProxyTable(opts.table ?? DEFAULT_TABLE);

  /** Every Service's rules as last rendered, and the Services changed since. */
  const rendered = new Map<string, ServiceRules>();
  let dirty = new Set<string>();
  /** A full sync is due (first, after a failed partial one, asked for); a rebuild after a failed full one. */
  let needFull = true;
  let needRebuild = false;
  let lastFull = 0;
  let lastSync: Proxy['lastSync'];
  const figures = { full: { count: 0, totalMs: 0 }, partial: { count: 0, totalMs: 0 } };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastStart = 0;
  let closed = false;
  let waiters: (() => void)[] = [];

  const render = (key: string): ServiceRules | undefined => {
    const svc = services.get(key);
    if (svc === undefined) return undefined;
    const ports = proxiedPorts(svc, slices.get(key), opts.nodeName);
    return ports.length === 0 ? undefined : renderService(ports, opts);
  };

  const sync = async (): Promise<void> => {
    lastStart = Date.now();
    const done = waiters;
    waiters = [];
    const kind = needRebuild ? 'rebuild' : needFull || lastStart - lastFull > fullPeriod ? 'full' : 'partial';
    needFull = needRebuild = false;
    const changed = new Map<string, ServiceRules | undefined>();
    for (const key of dirty) {
      const r = render(key);
      changed.set(key, r);
      if (r === undefined) rendered.delete(key);
      else rendered.set(key, r);
    }
    dirty = new Set();
    let plan: Plan | undefined;
    try {
      if (kind === 'partial') plan = table.partial(changed);
      else plan = table.full(rendered, kind === 'rebuild' ? undefined : await listTable(nft, table.name));
      if (plan.script !== '') await runNft(nft, plan.script);
      plan.commit();
      if (kind !== 'partial') lastFull = lastStart;
      const ms = Date.now() - lastStart;
      lastSync = {
        at: Date.now(),
        ms,
        commands: plan.script === '' ? 0 : plan.script.split('\n').length - 1,
        full: kind !== 'partial',
      };
      const f = kind === 'partial' ? figures.partial : figures.full;
      f.count++;
      f.totalMs += ms;
    } catch (err) {
      // The table's state is unknown: the next sync converges all of it, or rebuilds it.
      if (kind === 'partial') needFull = true;
      else needRebuild = true;
      log(
        `proxy: ${kind} sync failed, retrying with a ${needFull ? 'full' : 'rebuild'} sync: ${err instanceof Error ? err.message : String(err)}`,
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
  const changedService = (key: string): void => {
    dirty.add(key);
    schedule();
  };

  factory.informer<Service>(SERVICES).addHandler({
    add: (s) => {
      services.set(keyOf(s), s);
      changedService(keyOf(s));
    },
    update: (_o, s) => {
      services.set(keyOf(s), s);
      changedService(keyOf(s));
    },
    delete: (s) => {
      services.delete(keyOf(s));
      changedService(keyOf(s));
    },
  });
  const setSlice = (s: EndpointSlice): void => {
    const key = serviceKeyOfSlice(s);
    if (key === undefined) return;
    let m = slices.get(key);
    if (m === undefined) slices.set(key, (m = new Map<string, EndpointSlice>()));
    m.set(s.metadata.name ?? '', s);
    changedService(key);
  };
  factory.informer<EndpointSlice>(ENDPOINT_SLICES).addHandler({
    add: setSlice,
    update: (_o, s) => setSlice(s),
    delete: (s) => {
      const key = serviceKeyOfSlice(s);
      if (key === undefined) return;
      slices.get(key)?.delete(s.metadata.name ?? '');
      if (slices.get(key)?.size === 0) slices.delete(key);
      changedService(key);
    },
  });
  factory.start();
  await factory.waitForSync();
  running = sync().finally(() => (running = undefined));
  await running;
  // The periodic sync: partial (empty unless a change is pending), or full when one is due.
  const periodic = setInterval(schedule, opts.syncPeriodMs ?? 30_000);

  const sum = (a: SyncFigures, b: SyncFigures): SyncFigures => ({
    count: a.count + b.count,
    totalMs: a.totalMs + b.totalMs,
  });
  return {
    synced: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule();
      }),
    resync: () =>
      new Promise<void>((resolve) => {
        needFull = true;
        waiters.push(resolve);
        schedule();
      }),
    get lastSync() {
      return lastSync;
    },
    get syncs() {
      return {
        ...sum(figures.full, figures.partial),
        full: { ...figures.full },
        partial: { ...figures.partial },
      };
    },
    close: async ({ removeRules = false } = {}) => {
      closed = true;
      clearInterval(periodic);
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await factory.stop();
      await client.close();
      if (removeRules) await deleteNftTable(table.name, nft);
    },
  };
}
