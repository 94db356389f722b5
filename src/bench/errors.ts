/**
 * Failures of `capstan bench`, each with a stable code. The command prints the message on one
 * line and exits non-zero; the message never contains credentials.
 */

/** Stable codes of {@link BenchError}. */
export type BenchErrorCode =
  /** Bad flags or arguments (exit status 2). */
  | 'BENCH_USAGE'
  /** The kubeconfig cannot be read or used. */
  | 'BENCH_KUBECONFIG'
  /** No connection to the server (refused, unresolvable, TLS failure, timeout). */
  | 'BENCH_UNREACHABLE'
  /** The server refused the credentials (401) or the user may not do what a scenario needs (403). */
  | 'BENCH_UNAUTHORIZED'
  /** A request a scenario depends on answered with an unexpected status. */
  | 'BENCH_HTTP_STATUS'
  /** A server process the tool started did not become ready. */
  | 'BENCH_SERVER_START'
  /** A scheduler under test exited, or did not bind every pod in time. */
  | 'BENCH_SCHEDULER';

/** A benchmark failure worth a one-line message. */
export class BenchError extends Error {
  constructor(
    readonly code: BenchErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'BenchError';
  }

  /** Exit status of the command: 2 for usage mistakes, 1 for everything else. */
  get exitCode(): number {
    return this.code === 'BENCH_USAGE' ? 2 : 1;
  }
}
