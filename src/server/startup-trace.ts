/**
 * Start-up phases on stderr when `CAPSTAN_STARTUP_TRACE=1`: `startup <phase> <ms>` with the time
 * since the process started (`performance.now()`), for `tools/measure-startup.ts` and for anyone
 * asking where a server's start goes. Without the variable it does nothing.
 */
const enabled = process.env['CAPSTAN_STARTUP_TRACE'] === '1';

/** Records that `phase` was reached now. */
export function startupTrace(phase: string): void {
  if (enabled) process.stderr.write(`startup ${phase} ${performance.now().toFixed(1)}\n`);
}
