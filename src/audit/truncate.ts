/**
 * kube's truncating wrapper (`plugin/pkg/audit/truncate`, `--audit-*-truncate-enabled`): an event
 * larger than `maxEventSize` bytes (serialized) at level Request or above loses its request and
 * response objects and gains the annotation `audit.k8s.io/truncated: "true"`; one still too
 * large is dropped (reported). Batches are split so none exceeds `maxBatchSize` bytes.
 */
import type { AuditBackend, PluginErrorLog } from './backend.js';
import { sortedMap, type AuditEvent } from './event.js';
import { levelRank } from './policy.js';

/** kube's truncate `Config`. */
export interface TruncateConfig {
  readonly maxEventSize: number;
  readonly maxBatchSize: number;
}

/** The annotation a truncated event carries. */
export const TRUNCATED_ANNOTATION = 'audit.k8s.io/truncated';

function size(ev: AuditEvent): number {
  return Buffer.byteLength(JSON.stringify(ev));
}

function truncated(ev: AuditEvent): AuditEvent {
  const { requestObject: _req, responseObject: _res, ...rest } = ev;
  return { ...rest, annotations: sortedMap({ ...(ev.annotations ?? {}), [TRUNCATED_ANNOTATION]: 'true' }) };
}

/** The truncating wrapper of `delegate`. */
export function truncateBackend(
  delegate: AuditBackend,
  config: TruncateConfig,
  log: PluginErrorLog,
): AuditBackend {
  return {
    name: `truncate<${delegate.name}>`,
    processEvents(events) {
      const results: (boolean | Promise<boolean>)[] = [];
      let batch: AuditEvent[] = [];
      let batchSize = 0;
      let dropped = 0;
      for (let ev of events) {
        let n = size(ev);
        if (n > config.maxEventSize && levelRank(ev.level) >= levelRank('Request')) {
          ev = truncated(ev);
          n = size(ev);
        }
        if (n > config.maxEventSize) {
          dropped++;
          continue;
        }
        if (batch.length > 0 && batchSize + n > config.maxBatchSize) {
          results.push(delegate.processEvents(batch));
          batch = [];
          batchSize = 0;
        }
        batch.push(ev);
        batchSize += n;
      }
      if (batch.length > 0) results.push(delegate.processEvents(batch));
      if (dropped > 0)
        log(
          `Error in audit plugin 'truncate' affecting ${dropped} audit events: event is too large even after truncating`,
        );
      if (results.some((r) => r instanceof Promise))
        return Promise.all(results.map(async (r) => r)).then((all) => all.every(Boolean));
      return (results as boolean[]).every(Boolean);
    },
    shutdown: () => delegate.shutdown(),
  };
}
