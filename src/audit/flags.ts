/**
 * The `--audit-*` flags, validated and typed with kube-apiserver's rules and messages
 * (`pkg/server/options/audit.go`): modes blocking|blocking-strict|batch, batch sizes and
 * throttling positive in batch mode, truncation limits consistent, the log format json|legacy,
 * rotation numbers not negative, the version `audit.k8s.io/v1`.
 */
import { FlagError, type FlagValue } from '../flags/flags.js';
import type { BatchConfig } from './buffered.js';
import type { LogFormat } from './log-backend.js';
import type { RotationOptions } from './rotating-file.js';
import type { TruncateConfig } from './truncate.js';

/** `--audit-log-mode` / `--audit-webhook-mode`. */
export type AuditMode = 'blocking' | 'blocking-strict' | 'batch';

const MODES: readonly AuditMode[] = ['batch', 'blocking', 'blocking-strict'];

/** One backend's delivery settings. */
export interface BackendFlags {
  readonly mode: AuditMode;
  readonly batch: BatchConfig;
  /** Undefined: truncation off. */
  readonly truncate: TruncateConfig | undefined;
}

/** The audit flags. */
export interface AuditFlags {
  /** Absolute, or '' (no auditing). */
  readonly policyFile: string;
  readonly log:
    | (BackendFlags & {
        /** Absolute, or `-` for standard output. */
        readonly path: string;
        readonly format: LogFormat;
        readonly rotation: RotationOptions;
      })
    | undefined;
  readonly webhook:
    (BackendFlags & { readonly configFile: string; readonly initialBackoffMs: number }) | undefined;
}

/** lumberjack's size when `--audit-log-maxsize` is 0 (kube 1.33 passes 0 through to it). */
const LUMBERJACK_DEFAULT_MB = 100;

function backendFlags(
  plugin: 'log' | 'webhook',
  get: (name: string) => FlagValue | undefined,
  asyncDelegate: boolean,
): BackendFlags {
  const f = (suffix: string): FlagValue | undefined => get(`audit-${plugin}-${suffix}`);
  const mode = f('mode') as AuditMode;
  if (!MODES.includes(mode)) {
    throw new FlagError(`invalid audit ${plugin} mode ${mode}, allowed modes are "${MODES.join(',')}"`);
  }
  const batch: BatchConfig = {
    bufferSize: f('batch-buffer-size') as number,
    maxBatchSize: f('batch-max-size') as number,
    maxBatchWaitMs: f('batch-max-wait') as number,
    throttleEnable: f('batch-throttle-enable') as boolean,
    throttleQps: f('batch-throttle-qps') as number,
    throttleBurst: f('batch-throttle-burst') as number,
    asyncDelegate,
  };
  if (mode === 'batch') {
    if (batch.bufferSize <= 0)
      throw new FlagError(
        `invalid audit batch ${plugin} buffer size ${batch.bufferSize}, must be a positive number`,
      );
    if (batch.maxBatchSize <= 0)
      throw new FlagError(
        `invalid audit batch ${plugin} max batch size ${batch.maxBatchSize}, must be a positive number`,
      );
    if (batch.throttleEnable) {
      if (batch.throttleQps <= 0)
        throw new FlagError(
          `invalid audit batch ${plugin} throttle QPS ${batch.throttleQps}, must be a positive number`,
        );
      if (batch.throttleBurst <= 0)
        throw new FlagError(
          `invalid audit batch ${plugin} throttle burst ${batch.throttleBurst}, must be a positive number`,
        );
    }
  }
  const maxEventSize = f('truncate-max-event-size') as number;
  const maxBatchSize = f('truncate-max-batch-size') as number;
  if (maxEventSize <= 0)
    throw new FlagError(
      `invalid audit truncate ${plugin} max event size ${maxEventSize}, must be a positive number`,
    );
  if (maxBatchSize < maxEventSize)
    throw new FlagError(
      `invalid audit truncate ${plugin} max batch size ${maxBatchSize}, must be greater than max event size (${maxEventSize})`,
    );
  const version = f('version') as string;
  if (version !== 'audit.k8s.io/v1') {
    throw new FlagError(`invalid group version, allowed versions are "[audit.k8s.io/v1]"`);
  }
  return {
    mode,
    batch,
    truncate: f('truncate-enabled') === true ? { maxEventSize, maxBatchSize } : undefined,
  };
}

/**
 * Reads the `--audit-*` flags from `values` (the parsed flag map); paths resolved by `resolvePath`.
 * @throws FlagError with kube's validation messages.
 */
export function parseAuditFlags(
  values: ReadonlyMap<string, FlagValue>,
  resolvePath: (p: string) => string,
): AuditFlags {
  const get = (name: string): FlagValue | undefined => values.get(name);
  const path = get('audit-log-path') as string;
  let log: AuditFlags['log'];
  if (path !== '') {
    const format = get('audit-log-format') as string;
    if (format !== 'json' && format !== 'legacy')
      throw new FlagError(`invalid audit log format ${format}, allowed formats are "legacy,json"`);
    for (const n of ['maxage', 'maxbackup', 'maxsize']) {
      const v = get(`audit-log-${n}`) as number;
      if (v < 0) throw new FlagError(`--audit-log-${n} ${v} can't be a negative number`);
    }
    const maxSize = get('audit-log-maxsize') as number;
    log = {
      ...backendFlags('log', get, false),
      path: path === '-' ? '-' : resolvePath(path),
      format,
      rotation: {
        maxSizeBytes: (maxSize === 0 ? LUMBERJACK_DEFAULT_MB : maxSize) * 1024 * 1024,
        maxBackups: get('audit-log-maxbackup') as number,
        maxAgeDays: get('audit-log-maxage') as number,
        compress: get('audit-log-compress') === true,
      },
    };
  }
  const configFile = get('audit-webhook-config-file') as string;
  const webhook =
    configFile === ''
      ? undefined
      : {
          ...backendFlags('webhook', get, true),
          configFile: resolvePath(configFile),
          initialBackoffMs: initialBackoff(values),
        };
  const policyFile = get('audit-policy-file') as string;
  return { policyFile: policyFile === '' ? '' : resolvePath(policyFile), log, webhook };
}

function initialBackoff(values: ReadonlyMap<string, FlagValue>): number {
  // The deprecated spelling wins only when it is the one given (both share kube's variable).
  const current = values.get('audit-webhook-initial-backoff') as number;
  const old = values.get('audit-webhook-batch-initial-backoff') as number;
  return old !== current && current === 10_000 ? old : current;
}
