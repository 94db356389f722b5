/**
 * The controllers of `capstan server`'s `--controllers` flag (kube-controller-manager's syntax:
 * `*`, `foo`, `-foo`; default `*`; empty runs none), under kube v1.33's names (canonical, with
 * the older short names as aliases): the in-process controller manager's (every controller of
 * `src/controller-manager/registry.ts`, namespace, service accounts, tokens, root CA, ClusterRole
 * aggregation, token cleaner and resource quota included) and the scheduler. kube-apiserver's own start-up work (system namespaces, bootstrap RBAC
 * policy, API Priority and Fairness, the `kubernetes` Service, cluster IP repair, CRD and
 * APIService handling, system PriorityClasses) is not listed: it always runs.
 *
 * `token-cleaner-controller` is off unless named (`--controllers=*,tokencleaner`), as in kube.
 */
import type { ControllerSelection, KnownController } from '../flags/controllers.js';
import { CONTROLLERS } from '../controller-manager/registry.js';

/**
 * The controllers `capstan server --controllers` selects among: the scheduler, then the
 * controller manager's (`src/controller-manager/registry.ts`), which it runs in-process.
 */
export const SERVER_CONTROLLERS: readonly KnownController[] = [
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
