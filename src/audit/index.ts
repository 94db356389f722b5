/**
 * Auditing (kube-apiserver's `--audit-*`): the policy, the log and webhook backends in their
 * modes, and the {@link Auditor} whose hooks the server's pipeline runs. See
 * docs/architecture.md for where it sits in the request path.
 */
import type { FastifyRequest } from 'fastify';
import { ignoreErrors, unionBackend, type AuditBackend, type PluginErrorLog } from './backend.js';
import { BufferedBackend } from './buffered.js';
import type { AuditFlags, BackendFlags } from './flags.js';
import { logBackend, openLogSink } from './log-backend.js';
import { loadPolicyFile } from './policy.js';
import { truncateBackend } from './truncate.js';
import { webhookBackend } from './webhook-backend.js';
import { Auditor } from './auditor.js';

export { Auditor } from './auditor.js';
export { parseAuditFlags, type AuditFlags } from './flags.js';
export { AuditPolicyError, parsePolicy, evaluatePolicy } from './policy.js';

/** What {@link buildAudit} needs. */
export interface AuditDeps {
  readonly flags: AuditFlags;
  readonly isLongRunning: (request: FastifyRequest) => boolean;
  /** Where backend failures and policy warnings go. */
  readonly log: { warn(message: string): void; error(message: string, err?: unknown): void };
}

function inMode(backend: AuditBackend, flags: BackendFlags, log: PluginErrorLog): AuditBackend {
  if (flags.mode === 'blocking-strict') return backend;
  if (flags.mode === 'blocking') return ignoreErrors(backend);
  return new BufferedBackend(backend, flags.batch, log);
}

function truncated(backend: AuditBackend, flags: BackendFlags, log: PluginErrorLog): AuditBackend {
  return flags.truncate === undefined ? backend : truncateBackend(backend, flags.truncate, log);
}

/**
 * Builds the auditor of `deps.flags`. Without a policy file (or without a backend) nothing is
 * audited, as kube-apiserver; audit IDs are handed out all the same.
 * @throws AuditPolicyError for a policy kube refuses; Error for an unusable log path or webhook
 *   configuration (start-up errors).
 */
export function buildAudit(deps: AuditDeps): Auditor {
  const { flags } = deps;
  const log: PluginErrorLog = (message, err) => deps.log.error(message, err);
  const policy = flags.policyFile === '' ? undefined : loadPolicyFile(flags.policyFile);
  for (const w of policy?.warnings ?? []) deps.log.warn(w);
  const backends: AuditBackend[] = [];
  if (policy !== undefined && flags.log !== undefined) {
    const sink = openLogSink(flags.log.path, flags.log.rotation);
    // kube: the log is wrapped in its mode, then truncated.
    const background = flags.log.mode === 'batch';
    backends.push(
      truncated(inMode(logBackend(sink, flags.log.format, log, background), flags.log, log), flags.log, log),
    );
  }
  if (policy !== undefined && flags.webhook !== undefined) {
    let hook: AuditBackend;
    try {
      hook = webhookBackend(
        { configFile: flags.webhook.configFile, initialBackoffMs: flags.webhook.initialBackoffMs },
        log,
      );
    } catch (err) {
      throw new Error(`initializing audit webhook: ${(err as Error).message}`, { cause: err });
    }
    // Truncation inside the batching (kube wraps it outside): the same per-event rule, and the
    // byte limit then bounds each EventList the webhook receives.
    backends.push(inMode(truncated(hook, flags.webhook, log), flags.webhook, log));
  }
  return new Auditor({
    policy,
    backend: backends.length === 0 ? undefined : unionBackend(backends),
    isLongRunning: deps.isLongRunning,
    log,
  });
}
