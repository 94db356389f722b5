/**
 * The HTTPS call to one webhook (kube's webhook REST client): a JSON POST with `?timeout=<n>s`,
 * the webhook's `caBundle` as the only trust (none: the system roots), HTTP/1.1 over kept-alive
 * connections (one agent per trust and server name), cut off after `timeoutSeconds`. A service
 * reference is dialled at the address the resolver picks, with the TLS server name
 * `<service>.<namespace>.svc` (kube-apiserver with endpoint routing).
 *
 * Every failure is a {@link WebhookCallError} whose message reads like kube's (a Go `url.Error`:
 * `Post "<url>": <cause>`), so `failed calling webhook "x": failed to call webhook: ...` tells an
 * operator what went wrong.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';

/** Where to send one review. */
export interface WebhookTarget {
  /** The URL kube would show: `url`, or `https://<svc>.<ns>.svc:<port><path>`. */
  readonly url: URL;
  /** The URL as kube shows it when it differs from `url`'s form (a service's explicit `:443`). */
  readonly display?: string;
  /** Where to connect (a service's resolved endpoint); default the URL's host and port. */
  readonly connectHost?: string;
  readonly connectPort?: number;
  /** TLS server name (SNI and certificate check); default the URL's host. */
  readonly serverName?: string;
  /** PEM CA bundle; undefined: the system roots. */
  readonly caBundle: string | undefined;
}

/** A failed call: the message is the cause as kube words it (without the webhook's name). */
export class WebhookCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

/** Largest response body read from a webhook (kube's client has no smaller bound). */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
]);

/** A Go-style description of a connection or TLS failure (also the aggregator's). */
export function describe(
  err: NodeJS.ErrnoException & { cert?: { subjectaltname?: string } },
  addr: string,
): string {
  const code = err.code ?? '';
  if (UNKNOWN_AUTHORITY.has(code))
    return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (err.cert?.subjectaltname ?? '')
      .split(', ')
      .map((n) => n.replace(/^(DNS|IP Address):/, ''))
      .filter((n) => n !== '');
    const host = (err as { host?: string }).host ?? '';
    return names.length === 0
      ? `tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match ${host}`
      : `tls: failed to verify certificate: x509: certificate is valid for ${names.join(', ')}, not ${host}`;
  }
  if (code === 'ECONNREFUSED') return `dial tcp ${addr}: connect: connection refused`;
  if (code === 'ECONNRESET') return `read tcp ${addr}: read: connection reset by peer`;
  if (code === 'EHOSTUNREACH') return `dial tcp ${addr}: connect: no route to host`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `dial tcp: lookup ${addr}: no such host`;
  return err.message;
}

/** kube's message for a non-2xx answer without a Status body (apimachinery's generic errors). */
function unexpectedStatusMessage(code: number, body: string, text: boolean): string {
  switch (code) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return 'the server does not allow access to the requested resource';
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return code >= 500
        ? `an error on the server (${JSON.stringify(text ? body.trim() : 'unknown')}) has prevented the request from succeeding`
        : `the server responded with the status code ${code} but did not return more information`;
  }
}

/** Posts JSON to webhooks; one per plugin pair, holding the kept-alive connections. */
export class WebhookClient {
  readonly #agents = new Map<string, Agent>();

  #agent(caBundle: string | undefined, serverName: string | undefined): Agent {
    const key = `${serverName ?? ''}\n${caBundle ?? ''}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      agent = new Agent({
        keepAlive: true,
        ca: caBundle === undefined ? [...rootCertificates] : caBundle,
        ...(serverName === undefined ? {} : { servername: serverName }),
      });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /**
   * Posts `body` and resolves with the parsed JSON answer of a 2xx response.
   * @throws WebhookCallError on connection, TLS, timeout, HTTP status or decoding failures.
   */
  post(target: WebhookTarget, body: unknown, timeoutSeconds: number): Promise<unknown> {
    const url = new URL(target.url);
    url.searchParams.set('timeout', `${timeoutSeconds}s`);
    const shown = target.display === undefined ? url.toString() : `${target.display}${url.search}`;
    const host = target.connectHost ?? url.hostname.replace(/^\[|\]$/g, '');
    const port = target.connectPort ?? (url.port === '' ? 443 : Number(url.port));
    const serverName = target.serverName ?? url.hostname.replace(/^\[|\]$/g, '');
    // SNI carries names only; an IP is checked against the certificate's IP SANs.
    const sni = isIP(serverName) === 0 ? serverName : undefined;
    const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      let settled = false;
      // Transport failures read as Go's url.Error; status and decoding ones stand alone.
      const fail = (message: string, transport = true): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new WebhookCallError(transport ? `Post ${JSON.stringify(shown)}: ${message}` : message));
      };
      const req = httpsRequest(
        {
          method: 'POST',
          host,
          port,
          path: `${url.pathname}${url.search}`,
          agent: this.#agent(target.caBundle, sni),
          ...(sni === undefined ? {} : { servername: sni }),
          headers: {
            host: url.host,
            'content-type': 'application/json',
            accept: 'application/json, */*',
            'content-length': payload.length,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy();
              fail(`response body larger than ${MAX_RESPONSE_BYTES} bytes`);
              return;
            }
            chunks.push(c);
          });
          res.on('error', (err) => fail(describe(err, addr)));
          res.on('end', () => {
            if (settled) return;
            const text = Buffer.concat(chunks).toString('utf8');
            const code = res.statusCode ?? 0;
            if (code < 200 || code > 206) {
              fail(errorStatusMessage(code, text, res.headers['content-type'] ?? ''), false);
              return;
            }
            let parsed: unknown;
            try {
              parsed = JSON.parse(text);
            } catch (err) {
              fail(text === '' ? 'unexpected end of JSON input' : (err as Error).message, false);
              return;
            }
            settled = true;
            clearTimeout(timer);
            resolve(parsed);
          });
        },
      );
      const timer = setTimeout(() => {
        fail('context deadline exceeded');
        req.destroy();
      }, timeoutSeconds * 1000);
      req.on('error', (err) => fail(describe(err, addr)));
      req.end(payload);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
  }
}

/** The error of a non-2xx answer: a Status body's message, else kube's generic wording. */
function errorStatusMessage(code: number, text: string, contentType: string): string {
  try {
    const status = JSON.parse(text) as { kind?: unknown; message?: unknown };
    if (status.kind === 'Status' && typeof status.message === 'string' && status.message !== '')
      return status.message;
  } catch {
    // not JSON: the generic message below
  }
  return unexpectedStatusMessage(code, text, contentType.startsWith('text/') || contentType === '');
}
