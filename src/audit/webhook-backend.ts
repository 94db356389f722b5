/**
 * The webhook backend (kube's `plugin/pkg/audit/webhook`): each batch is one `EventList` POSTed
 * to the server of a kubeconfig-format file (`--audit-webhook-config-file`: cluster server and
 * CA, client certificate or token), retried on any failure (network, TLS, non-2xx) with
 * exponential backoff from `--audit-webhook-initial-backoff` (factor 1.5, jitter 0.2, 5 tries,
 * as kube's `DefaultRetryBackoffWithInitialDelay`).
 */
import { request } from 'node:https';
import { readWebhookConfig, type WebhookTarget } from '../authn/webhook-config.js';
import type { AuditBackend, PluginErrorLog } from './backend.js';
import { AUDIT_API_VERSION, type AuditEvent } from './event.js';

/** Webhook settings. */
export interface WebhookBackendOptions {
  readonly configFile: string;
  readonly initialBackoffMs: number;
  /** Per-call deadline (kube's webhook client: 30 s). */
  readonly timeoutMs?: number;
}

const STEPS = 5;
const FACTOR = 1.5;
const JITTER = 0.2;

/** The items of an EventList carry no kind/apiVersion of their own (kube encodes them so). */
function item(ev: AuditEvent): Omit<AuditEvent, 'kind' | 'apiVersion'> {
  const { kind: _k, apiVersion: _v, ...rest } = ev;
  return rest;
}

/**
 * The webhook backend of `options`.
 * @throws WebhookConfigError when the kubeconfig is unusable (a start-up error).
 */
export function webhookBackend(options: WebhookBackendOptions, log: PluginErrorLog): AuditBackend {
  const target: WebhookTarget = readWebhookConfig(options.configFile);
  const sleepers = new Map<NodeJS.Timeout, () => void>();
  let closing = false;
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(() => {
        sleepers.delete(t);
        resolve();
      }, ms);
      sleepers.set(t, resolve);
    });
  const send = async (events: readonly AuditEvent[]): Promise<void> => {
    const body = { kind: 'EventList', apiVersion: AUDIT_API_VERSION, metadata: {}, items: events.map(item) };
    let delay = options.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const status = await post(target, JSON.stringify(body), options.timeoutMs ?? 30_000);
        if (status >= 200 && status < 300) return;
        throw new Error(`the server responded with status ${status}`);
      } catch (err) {
        // At shutdown one more try is all there is time for.
        if (attempt >= STEPS || closing) throw err;
        await sleep(delay * (1 + Math.random() * JITTER));
        delay *= FACTOR;
      }
    }
  };
  return {
    name: 'webhook',
    processEvents(events) {
      return send(events).then(
        () => true,
        (err: unknown) => {
          log(
            `Error in audit plugin 'webhook' affecting ${events.length} audit events: ${(err as Error).message}`,
          );
          return false;
        },
      );
    },
    shutdown() {
      closing = true;
      for (const [t, wake] of sleepers) {
        clearTimeout(t);
        wake();
      }
      sleepers.clear();
      return Promise.resolve();
    },
  };
}

/** POSTs `json` to the webhook; resolves with the status (the body is read and ignored). */
function post(target: WebhookTarget, json: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(target.server);
    const payload = Buffer.from(json);
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(payload.length),
          ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
        },
        ...(target.ca === undefined ? {} : { ca: target.ca }),
        ...(target.cert === undefined ? {} : { cert: target.cert }),
        ...(target.key === undefined ? {} : { key: target.key }),
        rejectUnauthorized: target.insecureSkipVerify !== true,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url.origin}: timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
