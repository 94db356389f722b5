/**
 * The controllers' configuration: kube-controller-manager's flags, parsed (the analogue of kube's
 * KubeControllerManagerConfiguration). `src/controller-manager/options.ts` fills it from the
 * command line; the in-process manager of `capstan server` fills it with the defaults. Durations
 * are milliseconds; absent files are ''.
 */
import type { CertKeyPair } from '../pki/certificate.js';

/** The certificate signing flags (`--cluster-signing-*`). */
export interface ClusterSigningConfig {
  readonly certFile: string;
  readonly keyFile: string;
  /**
   * The cluster CA in memory, in place of `certFile`/`keyFile` (the in-process manager of
   * `capstan server` is given the server's CA; not a flag).
   */
  readonly ca?: CertKeyPair;
  readonly durationMs: number;
  /** Per-signer pairs: `kubelet-serving`, `kubelet-client`, `kube-apiserver-client`, `legacy-unknown`. */
  readonly signers: Readonly<Record<string, { readonly certFile: string; readonly keyFile: string }>>;
}

/** Parsed controller flags. */
export interface ControllersConfig {
  /** `--concurrent-<x>-syncs` by x (`deployment`, `replicaset`, `rc`, `gc`, ...): workers per controller. */
  readonly concurrentSyncs: Readonly<Record<string, number>>;
  readonly clusterSigning: ClusterSigningConfig;
  readonly rootCaFile: string;
  readonly serviceAccountPrivateKeyFile: string;
  readonly allocateNodeCidrs: boolean;
  readonly clusterCidr: string;
  /** `--node-cidr-mask-size` (0: 24 for IPv4, 64 for IPv6), and its per-family variants. */
  readonly nodeCidrMaskSize: number;
  readonly nodeCidrMaskSizeIPv4: number;
  readonly nodeCidrMaskSizeIPv6: number;
  readonly serviceClusterIpRange: string;
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeMonitorPeriodMs: number;
  readonly nodeStartupGracePeriodMs: number;
  readonly terminatedPodGcThreshold: number;
  /** `--enable-garbage-collector`. */
  readonly enableGarbageCollector: boolean;
  /** How often the garbage collector re-reads discovery (kube: 30 s, not a flag). */
  readonly gcDiscoveryPeriodMs: number;
  /** `--min-resync-period`: informers resync between this and twice it (kube: 12 h). */
  readonly minResyncPeriodMs: number;
  /** Every flag's value by name, including those not implemented (`config.flags.get('...')`). */
  readonly flags: ReadonlyMap<string, unknown>;
}

/** Workers of the controller whose flag is `--concurrent-<key>-syncs`; `fallback` when not a flag. */
export function concurrency(config: ControllersConfig, key: string, fallback = 1): number {
  const n = config.concurrentSyncs[key];
  return n === undefined || n < 1 ? fallback : n;
}
