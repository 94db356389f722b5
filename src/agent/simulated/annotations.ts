/**
 * The annotations that steer simulated nodes and the pods on them, as kwok's stages do, and
 * their parsing. Durations use Go's syntax (`2s`, `1m30s`), as every flag of Capstan does.
 *
 * Pods:
 * - `sim.capstan.dev/complete-after: 2s`: the containers exit this long after they start; the pod
 *   then ends Succeeded or Failed as its restart policy says (a container that kube would restart
 *   restarts, with `restartCount` one higher).
 * - `sim.capstan.dev/exit-code: "1"`: the containers' exit code (0..255, default 0); alone it
 *   means `complete-after: 0s`.
 * - `sim.capstan.dev/stop-after: 10s`: how long the containers take to stop once the pod is
 *   deleted (default 0s: at once). Past the pod's grace period they are killed (exit code 137).
 *
 * Nodes:
 * - `sim.capstan.dev/heartbeat: "stopped"`: the node's agent freezes, as a dead kubelet: no lease
 *   renewals, no node status, no pod updates, until the annotation goes.
 * - `sim.capstan.dev/ready: "false"`: the node reports `Ready=False` (reason `KubeletNotReady`)
 *   while still heartbeating.
 */
import { DurationError, parseDuration } from '../../flags/duration.js';

/** Annotation and label names, one place. */
export const SIM = {
  completeAfter: 'sim.capstan.dev/complete-after',
  exitCode: 'sim.capstan.dev/exit-code',
  stopAfter: 'sim.capstan.dev/stop-after',
  heartbeat: 'sim.capstan.dev/heartbeat',
  ready: 'sim.capstan.dev/ready',
  /** The label every simulated Node carries (kwok's `type: kwok`). */
  nodeLabel: 'node.capstan.dev/simulated',
} as const;

/** What a pod's annotations ask of its simulated containers. */
export interface PodBehaviour {
  /** Milliseconds from container start to exit; undefined: the containers run until deleted. */
  readonly completeAfterMs: number | undefined;
  /** Exit code of the containers when they complete. */
  readonly exitCode: number;
  /** Milliseconds the containers take to stop after the pod is deleted. */
  readonly stopAfterMs: number;
  /** One line per annotation that could not be read (those annotations are ignored). */
  readonly problems: readonly string[];
}

const RUN_FOREVER: PodBehaviour = Object.freeze({
  completeAfterMs: undefined,
  exitCode: 0,
  stopAfterMs: 0,
  problems: Object.freeze([]),
});

function duration(name: string, text: string, problems: string[]): number | undefined {
  try {
    const ms = parseDuration(text.trim());
    if (ms < 0) {
      problems.push(`annotation ${name}: ${JSON.stringify(text)} is negative`);
      return undefined;
    }
    return ms;
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    problems.push(`annotation ${name}: ${err.message}`);
    return undefined;
  }
}

/**
 * Reads a pod's simulation annotations. Never throws: a value that cannot be read is listed in
 * `problems` and ignored (the pod then behaves as if it were absent).
 */
export function podBehaviour(annotations: Readonly<Record<string, string>> | undefined): PodBehaviour {
  if (annotations === undefined) return RUN_FOREVER;
  const completeText = annotations[SIM.completeAfter];
  const exitText = annotations[SIM.exitCode];
  const stopText = annotations[SIM.stopAfter];
  if (completeText === undefined && exitText === undefined && stopText === undefined) return RUN_FOREVER;
  const problems: string[] = [];
  let completeAfterMs =
    completeText === undefined ? undefined : duration(SIM.completeAfter, completeText, problems);
  let exitCode = 0;
  if (exitText !== undefined) {
    const trimmed = exitText.trim();
    const n = /^\d{1,3}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
    if (Number.isInteger(n) && n >= 0 && n <= 255) {
      exitCode = n;
      if (completeText === undefined) completeAfterMs = 0;
    } else {
      problems.push(`annotation ${SIM.exitCode}: ${JSON.stringify(exitText)} is not an exit code (0..255)`);
    }
  }
  const stopAfterMs = stopText === undefined ? 0 : (duration(SIM.stopAfter, stopText, problems) ?? 0);
  return { completeAfterMs, exitCode, stopAfterMs, problems };
}

/** What a Node's annotations ask of its simulated agent. */
export interface NodeControl {
  /** False: the agent is frozen (no lease, no status, no pod work). */
  readonly heartbeat: boolean;
  /** False: the node reports NotReady. */
  readonly ready: boolean;
}

/** Reads a Node's control annotations; unknown values mean the default (heartbeating, ready). */
export function nodeControl(annotations: Readonly<Record<string, string>> | undefined): NodeControl {
  return {
    heartbeat: annotations?.[SIM.heartbeat] !== 'stopped',
    ready: annotations?.[SIM.ready] !== 'false',
  };
}
