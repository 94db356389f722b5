/**
 * The server's log: warnings and errors only, one line each on stderr, in klog's header format
 * (`E0102 15:04:05.123456   42 message`), which operators of kube-apiserver already grep.
 *
 * It doubles as fastify's logger (`loggerInstance`): fastify's per-request info lines are
 * no-ops and `child()` returns the same logger, so logging costs nothing on the request path;
 * the error handler's 5xx reports arrive here. Pino is not loaded at all (start time).
 */
import type { FastifyBaseLogger } from 'fastify';

/** Where log lines go (stderr by default; tests capture them). */
export type LogSink = (line: string) => void;

function header(severity: 'W' | 'E', now: Date): string {
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const micros = String(now.getMilliseconds() * 1000).padStart(6, '0');
  return (
    `${severity}${p2(now.getMonth() + 1)}${p2(now.getDate())} ` +
    `${p2(now.getHours())}:${p2(now.getMinutes())}:${p2(now.getSeconds())}.${micros} ${String(process.pid).padStart(7)} `
  );
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

/** The server's logger; see the module comment. */
export class ServerLog {
  readonly #sink: LogSink;

  constructor(sink: LogSink = (line) => process.stderr.write(`${line}\n`)) {
    this.#sink = sink;
  }

  warn(message: string): void {
    this.#sink(header('W', new Date()) + message);
  }

  error(message: string, err?: unknown): void {
    this.#sink(header('E', new Date()) + (err === undefined ? message : `${message}: ${describe(err)}`));
  }

  /** This log as fastify's logger (pino's call shapes: `(obj, msg)` or `(msg)`). */
  asFastifyLogger(): FastifyBaseLogger {
    const noop = (): void => undefined;
    const toLine = (args: unknown[]): { message: string; err: unknown } => {
      const [first, second] = args;
      if (typeof first === 'string') return { message: first, err: undefined };
      const obj = (first ?? {}) as { err?: unknown };
      return {
        message: typeof second === 'string' ? second : 'error',
        err: obj.err ?? (first instanceof Error ? first : undefined),
      };
    };
    const logger: FastifyBaseLogger = {
      level: 'warn',
      silent: noop,
      trace: noop,
      debug: noop,
      info: noop,
      warn: (...args: unknown[]) => {
        const { message, err } = toLine(args);
        this.warn(err === undefined ? message : `${message}: ${describe(err)}`);
      },
      error: (...args: unknown[]) => {
        const { message, err } = toLine(args);
        this.error(message, err);
      },
      fatal: (...args: unknown[]) => {
        const { message, err } = toLine(args);
        this.error(message, err);
      },
      child: () => logger,
    };
    return logger;
  }
}
