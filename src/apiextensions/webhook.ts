/**
 * Conversion of custom objects between versions: `None` (only `apiVersion` changes) and
 * `Webhook` (a ConversionReview `apiextensions.k8s.io/v1` POSTed over HTTPS to the CRD's
 * `clientConfig`: a `url`, or a `service` reached through its Endpoints with the TLS name
 * `<service>.<namespace>.svc`, trusting `caBundle`). A failed conversion is kube's 500
 * `conversion webhook for <group>/<version>, Kind=<kind> failed: ...`.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:https';
import { internalError } from '../api/errors.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import type { CrdConversion } from './definition.js';
import type { ConvertObjects } from './converting-store.js';

/** How long a conversion webhook may take (kube's default timeout). */
const WEBHOOK_TIMEOUT_MS = 30_000;

/** A resolved webhook address. */
export interface WebhookTarget {
  readonly url: URL;
  /** TLS server name when it differs from the URL's host (services). */
  readonly servername?: string;
}

/** Finds a service's address: `host:port` of one ready endpoint, or undefined. */
export type ServiceResolver = (namespace: string, name: string, port: number) => Promise<string | undefined>;

/** `None`: the objects with `apiVersion` set. */
export const convertNone: ConvertObjects = (objects, apiVersion) =>
  Promise.resolve(objects.map((o) => ({ ...o, apiVersion })));

function post(target: WebhookTarget, ca: string | undefined, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      target.url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        ...(ca === undefined ? {} : { ca }),
        ...(target.servername === undefined ? {} : { servername: target.servername }),
        timeout: WEBHOOK_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300)
            reject(new Error(`the server responded with ${res.statusCode}: ${text}`));
          else resolve(text);
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The webhook conversion of a CRD's `spec.conversion`. */
export function webhookConversion(
  conversion: CrdConversion,
  resolveService: ServiceResolver,
): ConvertObjects {
  const cc = conversion.clientConfig ?? {};
  const caBundle =
    typeof cc['caBundle'] === 'string' ? Buffer.from(cc['caBundle'], 'base64').toString('utf8') : undefined;
  const target = async (): Promise<WebhookTarget> => {
    if (typeof cc['url'] === 'string') return { url: new URL(cc['url']) };
    const svc: JsonObject = isJsonObject(cc['service']) ? cc['service'] : {};
    const namespace = typeof svc['namespace'] === 'string' ? svc['namespace'] : '';
    const name = typeof svc['name'] === 'string' ? svc['name'] : '';
    const port = typeof svc['port'] === 'number' ? svc['port'] : 443;
    const path = typeof svc['path'] === 'string' ? svc['path'] : '/';
    const host = await resolveService(namespace, name, port);
    if (host === undefined)
      throw new Error(`service "${name}" in namespace "${namespace}" has no ready endpoints`);
    return { url: new URL(`https://${host}${path}`), servername: `${name}.${namespace}.svc` };
  };
  return async (objects, apiVersion) => {
    const first = objects[0];
    if (first === undefined) return [];
    const failed = (why: string): Error =>
      internalError(
        `conversion webhook for ${String(first.apiVersion)}, Kind=${String(first.kind)} failed: ${why}`,
      );
    const uid = randomUUID();
    const review = {
      kind: 'ConversionReview',
      apiVersion: 'apiextensions.k8s.io/v1',
      request: { uid, desiredAPIVersion: apiVersion, objects },
    };
    let text: string;
    try {
      text = await post(await target(), caBundle, JSON.stringify(review));
    } catch (err) {
      throw failed(err instanceof Error ? err.message : String(err));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw failed('the response is not JSON');
    }
    const response =
      isJsonObject(parsed) && isJsonObject(parsed['response']) ? parsed['response'] : undefined;
    if (response === undefined) throw failed('no response in the ConversionReview');
    if (response['uid'] !== uid)
      throw failed(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(response['uid'])}`);
    const result = isJsonObject(response['result']) ? response['result'] : {};
    if (result['status'] !== 'Success') {
      throw failed(typeof result['message'] === 'string' ? result['message'] : 'the webhook did not succeed');
    }
    const converted = Array.isArray(response['convertedObjects']) ? response['convertedObjects'] : [];
    if (converted.length !== objects.length) {
      throw failed(`expected ${objects.length} converted objects, got ${converted.length}`);
    }
    return converted.map((c, i) => {
      if (!isJsonObject(c) || c['apiVersion'] !== apiVersion) {
        throw failed(`invalid converted object at index ${i}: wrong apiVersion`);
      }
      // kube keeps the metadata the webhook may not change (uid, name, resourceVersion...).
      const original = objects[i] as KubeObject;
      const meta = isJsonObject(c['metadata']) ? c['metadata'] : {};
      return {
        ...c,
        metadata: {
          ...original.metadata,
          labels: meta['labels'] ?? original.metadata.labels,
          annotations: meta['annotations'] ?? original.metadata.annotations,
        },
      } as KubeObject;
    });
  };
}
