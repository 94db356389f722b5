/**
 * The pod printer: READY, STATUS and RESTARTS summarise container states the way kube-apiserver's
 * `printPod` does (kubectl 1.33 server), including sidecar (restartable init) containers, the
 * `Init:` reasons, `SchedulingGated`, `Terminating`, and the `(5m ago)` restart suffix.
 */
import type { KubeObject } from '../api/object.js';
import { AGE, column, columns, NAME, wide } from './columns.js';
import { humanDuration, parseTime, since } from './duration.js';
import { int, list, obj, optBool, str, type Fields } from './fields.js';
import type { TablePrinter } from './index.js';

const POD_COLUMNS = columns(
  NAME,
  column('Ready', 'string', 'Ready containers out of all containers of the pod.'),
  column('Status', 'string', 'Summary of the pod phase and container states.'),
  column('Restarts', 'string', 'Container restarts, with the time since the last one.'),
  AGE,
  wide('IP', 'First IP address of the pod.'),
  wide('Node', 'Node the pod is bound to.'),
  wide('Nominated Node', 'Node the scheduler nominated for preemption.'),
  wide('Readiness Gates', 'Readiness gates whose condition is True, out of all gates.'),
);

/** The timestamp a container last terminated (`lastState.terminated.finishedAt`), if any. */
function lastTermination(status: Fields): unknown {
  return obj(obj(status['lastState'])['terminated'])['finishedAt'];
}

/**
 * Keeps the later of two timestamps (ms), as Go's `Before` comparison against a zero start does:
 * a missing or zero `finishedAt` never counts as a restart time.
 */
function later(current: number | undefined, candidate: unknown): number | undefined {
  const ms = parseTime(candidate);
  if (ms === undefined) return current;
  return current === undefined || current < ms ? ms : current;
}

/** A container state member (`waiting`, `terminated`, `running`) when set (a non-nil pointer). */
function present(value: unknown): Fields | undefined {
  return value === undefined || value === null ? undefined : obj(value);
}

function conditionIs(statusObj: Fields, type: string): boolean {
  for (const item of list(statusObj['conditions'])) {
    const condition = obj(item);
    if (str(condition['type']) === type) return str(condition['status']) === 'True';
  }
  return false;
}

function hasReadyCondition(statusObj: Fields): boolean {
  return list(statusObj['conditions']).some((item) => {
    const condition = obj(item);
    return str(condition['type']) === 'Ready' && str(condition['status']) === 'True';
  });
}

/** Reason text of a terminated container without a reason: `Signal:9` or `ExitCode:1`. */
function terminatedText(terminated: Fields): string {
  const signal = int(terminated['signal']);
  return signal !== 0 ? `Signal:${signal}` : `ExitCode:${int(terminated['exitCode'])}`;
}

interface PodSummary {
  readonly ready: string;
  readonly reason: string;
  readonly restarts: string;
}

/** READY, STATUS and RESTARTS of a pod at `now`. */
export function summarisePod(pod: KubeObject, now: Date): PodSummary {
  const spec = obj(pod['spec']);
  const status = obj(pod['status']);
  const phase = str(status['phase']);
  const initSpecs = list(spec['initContainers']).map(obj);
  const restartable = new Set(
    initSpecs.filter((c) => str(c['restartPolicy']) === 'Always').map((c) => str(c['name'])),
  );
  const total = list(spec['containers']).length + restartable.size;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;

  let reason = str(status['reason']) || phase;
  for (const item of list(status['conditions'])) {
    const condition = obj(item);
    if (str(condition['type']) === 'PodScheduled' && str(condition['reason']) === 'SchedulingGated') {
      reason = 'SchedulingGated';
    }
  }

  let initializing = false;
  const initStatuses = list(status['initContainerStatuses']).map(obj);
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i] ?? {};
    const state = obj(container['state']);
    const terminated = present(state['terminated']);
    const waiting = present(state['waiting']);
    const isSidecar = restartable.has(str(container['name']));
    restarts += int(container['restartCount']);
    lastRestart = later(lastRestart, lastTermination(container));
    if (isSidecar) {
      sidecarRestarts += int(container['restartCount']);
      lastSidecarRestart = later(lastSidecarRestart, lastTermination(container));
    }
    if (terminated !== undefined && int(terminated['exitCode']) === 0) continue;
    if (isSidecar && optBool(container['started']) === true) {
      if (container['ready'] === true) ready++;
      continue;
    }
    if (terminated !== undefined) {
      const why = str(terminated['reason']);
      reason = why === '' ? `Init:${terminatedText(terminated)}` : `Init:${why}`;
    } else if (
      waiting !== undefined &&
      str(waiting['reason']) !== '' &&
      str(waiting['reason']) !== 'PodInitializing'
    ) {
      reason = `Init:${str(waiting['reason'])}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionIs(status, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = list(status['containerStatuses']).map(obj);
    // Walked from the last container so that the first container's state wins the STATUS cell.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i] ?? {};
      const state = obj(container['state']);
      restarts += int(container['restartCount']);
      lastRestart = later(lastRestart, lastTermination(container));
      const waiting = present(state['waiting']);
      const terminated = present(state['terminated']);
      if (waiting !== undefined && str(waiting['reason']) !== '') {
        reason = str(waiting['reason']);
      } else if (terminated !== undefined && str(terminated['reason']) !== '') {
        reason = str(terminated['reason']);
      } else if (terminated !== undefined) {
        reason = terminatedText(terminated);
      } else if (container['ready'] === true && present(state['running']) !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = hasReadyCondition(status) ? 'Running' : 'NotReady';
    }
  }

  const deleting = pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
  if (deleting && str(status['reason']) === 'NodeLost') {
    reason = 'Unknown';
  } else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') {
    reason = 'Terminating';
  }

  let restartText = String(restarts);
  if (restarts !== 0 && lastRestart !== undefined) {
    restartText = `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;
  }
  return { ready: `${ready}/${total}`, reason, restarts: restartText };
}

/** READINESS GATES: gates whose pod condition is `True`, out of all gates; `<none>` without gates. */
function readinessGates(spec: Fields, status: Fields): string {
  const gates = list(spec['readinessGates']).map(obj);
  if (gates.length === 0) return '<none>';
  const conditions = list(status['conditions']).map(obj);
  let satisfied = 0;
  for (const gate of gates) {
    const found = conditions.find((c) => str(c['type']) === str(gate['conditionType']));
    if (found !== undefined && str(found['status']) === 'True') satisfied++;
  }
  return `${satisfied}/${gates.length}`;
}

/** Printer for `pods`. */
export const POD_PRINTER: TablePrinter = {
  columns: POD_COLUMNS,
  cells(pod, now) {
    const spec = obj(pod['spec']);
    const status = obj(pod['status']);
    const summary = summarisePod(pod, now);
    // The internal Pod keeps only podIPs; conversion from v1 fills it from podIP when empty.
    const ip = str(obj(list(status['podIPs'])[0])['ip']) || str(status['podIP']);
    return [
      pod.metadata.name ?? '',
      summary.ready,
      summary.reason,
      summary.restarts,
      since(pod.metadata.creationTimestamp, now),
      ip || '<none>',
      str(spec['nodeName']) || '<none>',
      str(status['nominatedNodeName']) || '<none>',
      readinessGates(spec, status),
    ];
  },
};
