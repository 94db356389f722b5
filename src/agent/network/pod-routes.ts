/**
 * Routes between nodes' pod networks, in the manner of flannel's host-gw backend (what k3s
 * ships): for every other Node with an IPv4 `podCIDR` and an `InternalIP`, a route
 * `<podCIDR> via <InternalIP>` in this host's main table, so a pod reaches pods on other nodes
 * through their node. The nodes must share a link (layer 2), as host-gw requires; a route whose
 * gateway is not directly reachable is refused by the kernel, logged, and retried on the next sync.
 *
 * The syncer is a client of the API (a Node informer) and the host's `ip` command. Its routes
 * carry their own route protocol number ({@link DEFAULT_ROUTE_PROTOCOL}), which is how it tells
 * them from every other route: it replaces and deletes only routes of that protocol, and never
 * adds a route for a CIDR that already has a route of another protocol (a node's own bridge,
 * an administrator's route), which it logs instead. A sync lists the kernel's routes each time,
 * so a restart converges instead of duplicating, and a route deleted by hand comes back on the
 * next sync (every `resyncPeriodMs`, and on any Node change).
 */
import { Client, NODES, SharedInformerFactory, type ClientConfig } from '../../client/index.js';
import type { Node } from '../../api/types/core-v1.js';
import { runCommand as run } from '../../proxy/proxier.js';

/** The route protocol number of the routes the syncer writes (`ip route ... proto 102`). */
export const DEFAULT_ROUTE_PROTOCOL = 102;

/** Options of {@link startPodRoutes}. */
export interface PodRoutesOptions {
  /** This node's name: its own pod CIDR gets no route (its bridge has it). */
  readonly nodeName: string;
  /** The ip command, its arguments before the route command (default `['ip']`; tests: `['ip', '-n', ns]`). */
  readonly ipCommand?: readonly string[];
  /** The route protocol that marks the syncer's routes (default {@link DEFAULT_ROUTE_PROTOCOL}). */
  readonly protocol?: number;
  /** Period of the sync that runs without changes (default 30 s). */
  readonly resyncPeriodMs?: number;
  readonly log?: (line: string) => void;
}

/** A running route syncer. */
export interface PodRoutes {
  /** Resolves after the next sync that starts after this call. */
  synced(): Promise<void>;
  /** The routes last applied: pod CIDR → gateway. */
  readonly routes: ReadonlyMap<string, string>;
  /** Stops; with `removeRoutes`, deletes every route of the syncer's protocol. */
  close(opts?: { removeRoutes?: boolean }): Promise<void>;
}

const IPV4_CIDR = /^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/;
const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/** The pod CIDR → gateway routes that the Nodes other than `self` ask for. */
export function desiredRoutes(nodes: Iterable<Node>, self: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const node of nodes) {
    if (node.metadata.name === self) continue;
    const gateway = node.status?.addresses?.find(
      (a) => a.type === 'InternalIP' && IPV4.test(a.address ?? ''),
    )?.address;
    if (gateway === undefined) continue;
    const spec = node.spec ?? {};
    const cidrs = spec.podCIDRs ?? (spec.podCIDR ? [spec.podCIDR] : []);
    for (const cidr of cidrs) if (IPV4_CIDR.test(cidr)) out.set(cidr, gateway);
  }
  return out;
}

interface KernelRoute {
  readonly dst: string;
  readonly gateway?: string;
  readonly protocol?: string | number;
}

/** Starts the Node informer and syncs once it is synced. */
export async function startPodRoutes(config: ClientConfig, opts: PodRoutesOptions): Promise<PodRoutes> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const ip = opts.ipCommand ?? ['ip'];
  const proto = String(opts.protocol ?? DEFAULT_ROUTE_PROTOCOL);
  const client = new Client({ ...config, userAgent: config.userAgent ?? 'capstan-routes' });
  const factory = new SharedInformerFactory(client, { log: (m, e) => log(`pod routes: ${m}: ${String(e)}`) });
  const nodes = new Map<string, Node>();
  let applied = new Map<string, string>();
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let waiters: (() => void)[] = [];

  const sync = async (): Promise<void> => {
    const done = waiters;
    waiters = [];
    try {
      const want = desiredRoutes(nodes.values(), opts.nodeName);
      const all = JSON.parse(
        (await run(ip, ['-j', '-4', 'route', 'show', 'table', 'main'])) || '[]',
      ) as KernelRoute[];
      const ours = new Map<string, KernelRoute>();
      const others = new Set<string>();
      for (const r of all) {
        const dst = r.dst.includes('/') ? r.dst : `${r.dst}/32`;
        if (String(r.protocol) === proto) ours.set(dst, r);
        else others.add(dst);
      }
      const now = new Map<string, string>();
      for (const [cidr, gateway] of want) {
        if (others.has(cidr)) {
          log(`pod routes: ${cidr} already has a route Capstan did not write; not routing it via ${gateway}`);
          continue;
        }
        if (ours.get(cidr)?.gateway !== gateway) {
          try {
            await run(ip, ['route', 'replace', cidr, 'via', gateway, 'proto', proto]);
          } catch (err) {
            log(`pod routes: routing ${cidr} via ${gateway}: ${(err as Error).message}`);
            continue;
          }
        }
        now.set(cidr, gateway);
      }
      for (const cidr of ours.keys()) {
        if (want.has(cidr) && !others.has(cidr)) continue;
        await run(ip, ['route', 'del', cidr, 'proto', proto]).catch((err: Error) =>
          log(`pod routes: removing ${cidr}: ${err.message}`),
        );
      }
      applied = now;
    } catch (err) {
      log(`pod routes: sync failed: ${(err as Error).message}`);
    } finally {
      for (const w of done) w();
    }
  };
  const schedule = (): void => {
    if (closed) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = sync().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        schedule();
      }
    });
  };

  const set = (n: Node): void => {
    nodes.set(n.metadata.name ?? '', n);
    schedule();
  };
  factory.informer<Node>(NODES).addHandler({
    add: set,
    update: (_o, n) => set(n),
    delete: (n) => {
      nodes.delete(n.metadata.name ?? '');
      schedule();
    },
  });
  factory.start();
  await factory.waitForSync();
  schedule();
  await running;
  const periodic = setInterval(schedule, opts.resyncPeriodMs ?? 30_000);

  return {
    synced: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule();
      }),
    get routes() {
      return applied;
    },
    close: async ({ removeRoutes = false } = {}) => {
      closed = true;
      clearInterval(periodic);
      while (running !== undefined) await running;
      await factory.stop();
      await client.close();
      if (removeRoutes) {
        const all = JSON.parse(
          (await run(ip, ['-j', '-4', 'route', 'show', 'table', 'main', 'proto', proto])) || '[]',
        ) as KernelRoute[];
        for (const r of all) await run(ip, ['route', 'del', r.dst, 'proto', proto]).catch(() => undefined);
      }
    },
  };
}
