/**
 * The init containers of one sync, kubelet's computeInitContainerActions (v1.33) with sidecars:
 *
 * - Until the pod has initialized, the init containers run one after the other: the latest one
 *   that ran decides. A regular one running is waited for; one that exited 0 lets the next start;
 *   one that failed is restarted (CrashLoopBackOff), or with `restartPolicy: Never` the pod fails.
 *   A sidecar (`restartPolicy: Always` on the init container) lets the next start once it runs
 *   and its startup probe, if any, succeeded; a sidecar failing its startup probe is killed and
 *   restarted.
 * - Sidecars before that one, and every sidecar once the pod has initialized (an app container
 *   exists in the sandbox), are kept running whatever the pod's restart policy: one that exited
 *   is restarted with the CrashLoopBackOff wait, one failing its liveness probe is killed first.
 *   Regular init containers never run again after initialization.
 *
 * A sidecar started without a startup probe counts as started at once, so the next init
 * container starts in the same sync.
 */
import type { Container } from '../../api/types/core-v1.js';
import type { ContainerInstance, PodRuntimeState } from '../runtime/runtime.js';
import { killContainer } from './lifecycle.js';
import { isSidecar } from './sidecar.js';
import { latestOf, startOrRestart } from './start.js';
import type { PodRecord, SyncDeps } from './sync.js';

/** The outcome: may the app containers run, and when to sync again. */
export interface InitResult {
  readonly initialized: boolean;
  readonly requeueAfterMs?: number;
}

interface Action {
  readonly index: number;
  /** Kill this instance first, with kube's message and probe. */
  readonly kill?: {
    readonly container: ContainerInstance;
    readonly message: string;
    readonly probe: 'liveness' | 'startup';
  };
}

function minDelay(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A running sidecar failing its liveness or startup probe: what to kill. */
function unhealthy(deps: SyncDeps, record: PodRecord, spec: Container, l: ContainerInstance): Action['kill'] {
  const v = deps.probes?.mustKill(record.pod.metadata.uid ?? '', spec.name ?? '', l.id);
  if (!v) return undefined;
  return {
    container: l,
    message: `Init container ${spec.name ?? ''} failed ${v.reason} probe`,
    probe: v.reason,
  };
}

/** What to do with the init containers given the runtime state (no side effects). */
function plan(
  deps: SyncDeps,
  record: PodRecord,
  state: PodRuntimeState | undefined,
  sandboxId: string,
): { initialized: boolean; failed: boolean; actions: Action[] } {
  const pod = record.pod;
  const uid = pod.metadata.uid ?? '';
  const inits = pod.spec?.initContainers ?? [];
  // A regular init container that succeeded in an earlier sandbox stays done.
  const instance = (c: Container): ContainerInstance | undefined =>
    latestOf(state, c.name ?? '', sandboxId) ?? (isSidecar(c) ? undefined : latestOf(state, c.name ?? ''));
  let initialized = (pod.spec?.containers ?? []).some((c) => {
    const l = latestOf(state, c.name ?? '', sandboxId);
    return l?.state === 'CONTAINER_RUNNING' || l?.state === 'CONTAINER_CREATED';
  });
  const actions: Action[] = [];
  const keepRunning = (i: number): void => {
    const spec = inits[i];
    if (!spec || !isSidecar(spec)) return;
    const l = instance(spec);
    if (!l || l.state !== 'CONTAINER_RUNNING') actions.push({ index: i });
    else {
      const kill = unhealthy(deps, record, spec, l);
      if (kill) actions.push({ index: i, kill });
    }
  };
  if (initialized) {
    inits.forEach((_, i) => keepRunning(i));
    return { initialized, failed: false, actions };
  }
  let frontier = -1;
  for (let i = inits.length - 1; i >= 0 && frontier < 0; i--) {
    const spec = inits[i];
    if (spec && instance(spec)) frontier = i;
  }
  for (let i = 0; i < frontier; i++) keepRunning(i);
  const next = (): void => {
    if (frontier === inits.length - 1) initialized = true;
    else actions.push({ index: frontier + 1 });
  };
  const spec = inits[frontier];
  const l = spec && instance(spec);
  if (!spec || !l) {
    actions.push({ index: 0 });
  } else if (isSidecar(spec)) {
    if (l.state !== 'CONTAINER_RUNNING') actions.push({ index: frontier });
    else {
      const kill = unhealthy(deps, record, spec, l);
      const started =
        !spec.startupProbe || !deps.probes || deps.probes.startupSucceeded(uid, spec.name ?? '', l.id);
      if (kill?.probe === 'startup') actions.push({ index: frontier, kill });
      else if (started) {
        next();
        if (kill) actions.push({ index: frontier, kill });
      }
    }
  } else if (l.state === 'CONTAINER_EXITED') {
    if (l.exitCode === 0) next();
    else if ((pod.spec?.restartPolicy ?? 'Always') === 'Never')
      return { initialized: false, failed: true, actions: [] };
    else actions.push({ index: frontier });
  } else if (l.state !== 'CONTAINER_RUNNING') {
    actions.push({ index: frontier });
  }
  return { initialized, failed: false, actions };
}

/**
 * Runs the init containers' part of a sync (see the module comment). `state` is the pod's
 * runtime state with a ready sandbox `sandboxId`.
 */
export async function syncInitContainers(
  deps: SyncDeps,
  record: PodRecord,
  initial: PodRuntimeState,
  sandboxId: string,
): Promise<InitResult> {
  const pod = record.pod;
  const uid = pod.metadata.uid ?? '';
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return { initialized: true };
  let state = initial;
  let requeue: number | undefined;
  // Each round starts what the state allows; a sidecar that started lets the next round go on.
  for (let round = 0; round <= inits.length; round++) {
    const p = plan(deps, record, state, sandboxId);
    if (p.failed || p.actions.length === 0)
      return { initialized: p.initialized, ...(requeue === undefined ? {} : { requeueAfterMs: requeue }) };
    let progressed = false;
    const ip = state.sandboxes[0]?.ips[0] ?? '';
    for (const a of p.actions) {
      if (!a.kill) continue;
      await killContainer(deps, pod, inits[a.index], a.kill.container, ip, {
        message: a.kill.message,
        probe: a.kill.probe,
      });
    }
    if (p.actions.some((a) => a.kill)) state = (await deps.runtime.listPods(uid)).get(uid) ?? state;
    for (const a of [...p.actions].sort((x, y) => x.index - y.index)) {
      const spec = inits[a.index];
      if (!spec) continue;
      const delay = await startOrRestart(deps, record, state, spec, 'init');
      requeue = minDelay(requeue, delay);
      if (delay === undefined && isSidecar(spec) && !spec.startupProbe) progressed = true;
    }
    if (p.initialized || !progressed)
      return { initialized: p.initialized, ...(requeue === undefined ? {} : { requeueAfterMs: requeue }) };
    state = (await deps.runtime.listPods(uid)).get(uid) ?? state;
  }
  return { initialized: false, ...(requeue === undefined ? {} : { requeueAfterMs: requeue }) };
}
