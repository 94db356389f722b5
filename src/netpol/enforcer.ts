/**
 * NetworkPolicy enforcement on one node, as a client of the API: Pods, Namespaces and
 * NetworkPolicies through shared informers; any change schedules a sync (at most one per
 * `minSyncPeriodMs`) that computes every local pod's policies and replaces the node's
 * `ip capstan-netpol` table in one transaction. What cannot be enforced is reported once
 * per policy as a Warning event (`NetworkPolicyNotEnforced`), never silently ignored.
 */
import { readFileSync } from 'node:fs';
import {
  Client,
  EventRecorder,
  NAMESPACES,
  NETWORK_POLICIES,
  PODS,
  SharedInformerFactory,
  type ClientConfig,
  type SharedInformer,
} from '../client/index.js';
import type { Namespace, Pod } from '../api/types/core-v1.js';
import type { NetworkPolicy } from '../api/types/networking-v1.js';
import { deleteNftTable, runNft } from '../proxy/proxier.js';
import { computePolicies } from './model.js';
import { NETPOL_TABLE, netpolTransaction } from './nftables.js';

/** True when bridged IPv4 frames pass the IP hooks in this network namespace. */
function bridgeCallsIptables(): boolean {
  try {
    return readFileSync('/proc/sys/net/bridge/bridge-nf-call-iptables', 'utf8').trim() === '1';
  } catch {
    return false;
  }
}

/** Options of {@link startNetworkPolicies}. */
export interface NetworkPolicyOptions {
  readonly nodeName: string;
  /** The node's own addresses: traffic from them to local pods is always allowed. */
  readonly nodeIps?: readonly string[];
  readonly nftCommand?: readonly string[];
  /** The nftables table (default `capstan-netpol`). */
  readonly table?: string;
  readonly minSyncPeriodMs?: number;
  readonly log?: (line: string) => void;
}

/** A running enforcer. */
export interface NetworkPolicyEnforcer {
  /** Resolves after the next sync that starts after this call. */
  synced(): Promise<void>;
  close(opts?: { removeRules?: boolean }): Promise<void>;
}

/** Starts the informers and enforces once they are synced. */
export async function startNetworkPolicies(
  config: ClientConfig,
  opts: NetworkPolicyOptions,
): Promise<NetworkPolicyEnforcer> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const nft = opts.nftCommand ?? ['nft'];
  const table = opts.table ?? NETPOL_TABLE;
  const client = new Client({ ...config, userAgent: config.userAgent ?? 'capstan-netpol' });
  const events = new EventRecorder(client, { component: 'capstan-netpol', host: opts.nodeName });
  const factory = new SharedInformerFactory(client, { log: (m, e) => log(`netpol: ${m}: ${String(e)}`) });
  const pods: SharedInformer<Pod> = factory.informer<Pod>(PODS);
  const namespaces: SharedInformer<Namespace> = factory.informer<Namespace>(NAMESPACES);
  const policies: SharedInformer<NetworkPolicy> = factory.informer<NetworkPolicy>(NETWORK_POLICIES);
  const reported = new Set<string>();
  if (opts.nftCommand === undefined && !bridgeCallsIptables()) {
    log(
      'netpol: net.bridge.bridge-nf-call-iptables is not 1: policies between pods on one bridge are not enforced',
    );
  }
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastStart = 0;
  let closed = false;
  let waiters: (() => void)[] = [];

  const sync = async (): Promise<void> => {
    lastStart = Date.now();
    const done = waiters;
    waiters = [];
    try {
      const { pods: local, unenforceable } = computePolicies({
        pods: pods.store.list(),
        namespaces: namespaces.store.list(),
        policies: policies.store.list(),
        nodeName: opts.nodeName,
      });
      for (const u of unenforceable) {
        const key = `${u.policy.metadata.uid ?? ''}:${u.message}`;
        if (reported.has(key)) continue;
        reported.add(key);
        log(`netpol: ${u.policy.metadata.namespace ?? ''}/${u.policy.metadata.name ?? ''}: ${u.message}`);
        events.event(u.policy, 'Warning', 'NetworkPolicyNotEnforced', 'Enforce', u.message);
      }
      await runNft(nft, netpolTransaction(local, opts.nodeIps ?? [], table));
    } catch (err) {
      log(`netpol: sync failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
      setTimeout(schedule, 1000).unref();
    } finally {
      for (const w of done) w();
    }
  };
  const schedule = (): void => {
    if (closed || timer !== undefined) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        if (running !== undefined) {
          void running.then(schedule);
          return;
        }
        running = sync().finally(() => (running = undefined));
      },
      Math.max(0, lastStart + (opts.minSyncPeriodMs ?? 1000) - Date.now()),
    );
  };
  const onChange = { add: schedule, update: schedule, delete: schedule };
  pods.addHandler(onChange);
  namespaces.addHandler(onChange);
  policies.addHandler(onChange);
  factory.start();
  await factory.waitForSync();
  running = sync().finally(() => (running = undefined));
  await running;

  return {
    synced: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule();
      }),
    close: async ({ removeRules = false } = {}) => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await factory.stop();
      await events.close();
      await client.close();
      if (removeRules) await deleteNftTable(table, nft);
    },
  };
}
