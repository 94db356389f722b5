/**
 * The in-process loops of `capstan server` that kube runs in kube-controller-manager, under
 * kube v1.33's controller names (canonical, with the older short names as aliases), for the
 * server's `--controllers` flag (kube-controller-manager's syntax: `*`, `foo`, `-foo`; default
 * `*`; empty runs none). kube-apiserver's own start-up work (system namespaces, bootstrap RBAC
 * policy, API Priority and Fairness, the `kubernetes` Service, cluster IP repair, CRD and
 * APIService handling, system PriorityClasses) is not listed: it always runs.
 *
 * Where the server differs from kube-controller-manager: `token-cleaner-controller` is disabled
 * by default in kube, but the server has always cleaned expired bootstrap tokens when
 * `--enable-bootstrap-token-auth` is set, so here `*` includes it. kube's
 * `bootstrap-signer-controller` has no counterpart in the server.
 */
import type { ControllerSelection, KnownController } from '../flags/controllers.js';
import { CONTROLLERS } from '../controller-manager/registry.js';

/** Canonical names of the server's controllers. */
export const CONTROLLER = {
  resourceQuota: 'resourcequota-controller',
  csrSigning: 'certificatesigningrequest-signing-controller',
} as const;

/** The server's own loops (the rest of `--controllers` is the in-process controller manager's). */
const SERVER_LOOPS: readonly KnownController[] = [
  { name: CONTROLLER.resourceQuota, aliases: ['resourcequota'] },
  { name: CONTROLLER.csrSigning, aliases: ['csrsigning'] },
];

/**
 * The controllers `capstan server --controllers` selects among: the server's loops, then the
 * controller manager's (`src/controller-manager/registry.ts`), which it runs in-process.
 */
export const SERVER_CONTROLLERS: readonly KnownController[] = [
  ...SERVER_LOOPS,
  // Not a controller in kube (its own binary); here `--controllers=-scheduler` turns it off.
  { name: 'scheduler' },
  ...CONTROLLERS.map((c) => ({
    name: c.name,
    ...(c.aliases === undefined ? {} : { aliases: c.aliases }),
    ...(c.disabledByDefault === undefined ? {} : { disabledByDefault: c.disabledByDefault }),
  })),
];

/** A selection that runs every controller (the flag's default, `*`). */
export const ALL_CONTROLLERS: ControllerSelection = {
  enabled: () => true,
  names: SERVER_CONTROLLERS.map((c) => c.name),
};
