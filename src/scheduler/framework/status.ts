/**
 * The outcome of a plugin at one extension point, as kube's framework.Status: a code and the
 * reasons shown in FailedScheduling events. `undefined` stands for Success on the hot path.
 */

/** Status codes, as kube's framework.Code. */
export enum Code {
  Success = 0,
  Error = 1,
  Unschedulable = 2,
  UnschedulableAndUnresolvable = 3,
  Wait = 4,
  Skip = 5,
  Pending = 6,
}

/** A non-success outcome. */
export interface Status {
  readonly code: Code;
  readonly reasons: readonly string[];
  /** The plugin that returned it (set by the framework). */
  plugin?: string;
  /** The underlying error for Code.Error. */
  readonly error?: unknown;
}

/** A status; `undefined` is success. */
export type MaybeStatus = Status | undefined;

/** `Unschedulable` with reasons. */
export function unschedulable(...reasons: string[]): Status {
  return { code: Code.Unschedulable, reasons };
}

/** `UnschedulableAndUnresolvable`: preemption cannot help on this node. */
export function unresolvable(...reasons: string[]): Status {
  return { code: Code.UnschedulableAndUnresolvable, reasons };
}

/** `Error`: something failed; the pod goes to backoff. */
export function errorStatus(err: unknown, context: string): Status {
  const msg = err instanceof Error ? err.message : String(err);
  return { code: Code.Error, reasons: [`${context}: ${msg}`], error: err };
}

/** `Skip` (PreFilter/PreScore: the plugin has nothing to do for this pod). */
export const SKIP: Status = Object.freeze({ code: Code.Skip, reasons: [] });

/** True for either unschedulable code. */
export function isRejection(s: MaybeStatus): boolean {
  return s !== undefined && (s.code === Code.Unschedulable || s.code === Code.UnschedulableAndUnresolvable);
}

/** The status message: reasons joined by ", " (kube's Status.Message). */
export function statusMessage(s: Status): string {
  return s.reasons.join(', ');
}
