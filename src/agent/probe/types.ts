/**
 * What every probe and hook handler shares: the outcome of one probe, the error of a handler
 * that cannot run (kube's "errored" probes, whose result is thrown away), and kube's
 * container-port resolution for `port: 8080` or `port: http`.
 */
import type { Container } from '../../api/types/core-v1.js';

/** One probe's outcome, kube's probe.Result: a warning counts as a success. */
export interface ProbeOutcome {
  readonly result: 'success' | 'warning' | 'failure';
  /** What the probe saw (the exec output, the HTTP failure...): the `Unhealthy` event's text. */
  readonly output: string;
}

/**
 * A probe that could not be run at all (an unknown named port, no handler): kube's `Unknown`
 * result with an error. The worker throws such a result away instead of counting it.
 */
export class ProbeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProbeError';
  }
}

/** kube's probes and hooks announce themselves as `kube-probe/1.33` and `kube-lifecycle/1.33`. */
export const KUBE_VERSION = '1.33';

/**
 * A probe's or hook's port: a number, the name of one of the container's ports, or a number
 * written as a string; it must be in 1–65535 (kube's ResolveContainerPort).
 */
export function resolveContainerPort(port: number | string | undefined, container: Container): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (typeof port === 'string') {
    const named = (container.ports ?? []).find((p) => p.name === port);
    if (named) n = named.containerPort ?? 0;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new ProbeError(`strconv.Atoi: parsing "${port}": invalid syntax`);
  } else throw new ProbeError(`intOrString had no kind: ${String(port)}`);
  if (n > 0 && n < 65536) return n;
  throw new ProbeError(`invalid port number: ${n}`);
}
