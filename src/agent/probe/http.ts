/**
 * kube's HTTP GET for probes and `httpGet` hooks: the URL from scheme (default http), host
 * (default the pod IP), port (number or name) and path; the request headers with `User-Agent:
 * kube-probe/1.33` (or `kube-lifecycle/1.33`) and `Accept: *\/*` unless the action sets them (an
 * empty Accept removes it), a `Host` header becoming the request's host; no keep-alive, no
 * compression, no proxy, certificates not verified, and headers parsed as leniently as Go's
 * client (lines ending in a bare LF).
 *
 * Redirects follow kube's rule: to the same host name they are followed (at most 10), to another
 * host they are not, and the 3xx answer itself is the result (a probe warning).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { Container, HTTPGetAction } from '../../api/types/core-v1.js';
import { dialErrorText, joinHostPort } from './net-errors.js';
import { KUBE_VERSION, resolveContainerPort, type ProbeOutcome } from './types.js';

/** The most of a response body kube reads (10 KiB). */
const MAX_BODY = 10 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A request ready to send. */
export interface HttpGetRequest {
  readonly url: URL;
  /** Header name → values, names canonicalized as Go's http.Header does. */
  readonly headers: Map<string, string[]>;
}

/** The answer to a GET (after redirects). */
export interface HttpGetResponse {
  readonly status: number;
  readonly body: string;
}

/** An HTTP GET that got no answer; `message` reads as Go's client error (`Get "url": ...`). */
export class HttpGetError extends Error {
  /** The server answered TLS with plain HTTP. */
  readonly plainHttpAnswer: boolean;
  constructor(message: string, plainHttpAnswer = false, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HttpGetError';
    this.plainHttpAnswer = plainHttpAnswer;
  }
}

function canonicalHeader(name: string): string {
  return name
    .split('-')
    .map((p) => (p ? p[0]?.toUpperCase() + p.slice(1).toLowerCase() : p))
    .join('-');
}

/** Builds the request of an HTTPGetAction (throws a ProbeError for a bad port). */
export function httpGetRequest(
  action: HTTPGetAction,
  container: Container,
  podIP: string,
  purpose: 'probe' | 'lifecycle',
): HttpGetRequest {
  const scheme = (action.scheme ?? '').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const base = `${scheme}://${joinHostPort(host, port)}`;
  let url: URL;
  try {
    url = new URL(action.path ?? '', base);
  } catch {
    url = new URL(base);
  }
  const headers = new Map<string, string[]>();
  for (const h of action.httpHeaders ?? []) {
    const name = canonicalHeader(h.name ?? '');
    headers.set(name, [...(headers.get(name) ?? []), h.value ?? '']);
  }
  if (!headers.has('User-Agent')) headers.set('User-Agent', [`kube-${purpose}/${KUBE_VERSION}`]);
  if (!headers.has('Accept')) headers.set('Accept', ['*/*']);
  else if ((headers.get('Accept')?.[0] ?? '') === '') headers.delete('Accept');
  return { url, headers };
}

interface RawAnswer {
  status: number;
  location: string | undefined;
  body: string;
}

function once(url: URL, headers: Map<string, string[]>, deadline: number): Promise<RawAnswer> {
  const addr = joinHostPort(
    url.hostname.replace(/^\[|\]$/g, ''),
    Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
  );
  const outgoing: http.OutgoingHttpHeaders = {};
  for (const [k, v] of headers) outgoing[k] = v.length === 1 ? v[0] : v;
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<RawAnswer>((resolve, reject) => {
    let gotHeaders = false;
    const fail = (text: string, plain = false, cause?: unknown): void =>
      reject(new HttpGetError(`Get "${url.href}": ${text}`, plain, { cause }));
    // No deadline (hooks): no timer (a delay past 2^31 ms would fire at once).
    const timer =
      deadline === Number.MAX_SAFE_INTEGER
        ? undefined
        : setTimeout(
            () => {
              req.destroy();
              fail(
                gotHeaders
                  ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)'
                  : 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
              );
            },
            Math.max(0, deadline - Date.now()),
          );
    const req = lib.request(
      url,
      // Lenient parsing, as Go's client: bare-LF header lines (simple CGI servers) are accepted.
      { method: 'GET', headers: outgoing, agent: false, rejectUnauthorized: false, insecureHTTPParser: true },
      (res) => {
        gotHeaders = true;
        const chunks: Buffer[] = [];
        let size = 0;
        let finished = false;
        const done = (): void => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            body: Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8'),
          });
          res.destroy();
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          if (size >= MAX_BODY) done();
        });
        res.on('end', done);
        res.on('error', () => done());
        res.on('close', done);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (gotHeaders) return;
      const code = err.code ?? '';
      if (code === 'EPROTO' || code.startsWith('ERR_SSL')) {
        fail('http: server gave HTTP response to HTTPS client', true, err);
      } else if (code === 'ECONNRESET' || code === 'EPIPE') {
        fail(code === 'EPIPE' ? 'write: broken pipe' : 'EOF', false, err);
      } else if (code.startsWith('HPE_')) {
        fail(`net/http: HTTP/1.x transport connection broken: ${err.message}`, false, err);
      } else {
        fail(dialErrorText(err, addr), false, err);
      }
    });
    req.end();
  });
}

/** Sends a GET within `timeoutMs` (0: no limit), following redirects by kube's rule. */
export async function httpGet(req: HttpGetRequest, timeoutMs: number): Promise<HttpGetResponse> {
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.MAX_SAFE_INTEGER;
  let url = req.url;
  let headers = req.headers;
  for (let via = 0; ; via++) {
    const answer = await once(url, headers, deadline);
    if (!REDIRECTS.has(answer.status) || !answer.location) return answer;
    let next: URL;
    try {
      next = new URL(answer.location, url);
    } catch {
      return answer;
    }
    if (next.hostname !== req.url.hostname) return answer;
    if (via + 1 >= 10) throw new HttpGetError(`Get "${next.href}": stopped after 10 redirects`);
    if (!/^[a-z][a-z0-9+.-]*:/i.test(answer.location) && !answer.location.startsWith('//')) {
      headers = new Map(headers);
    } else {
      headers = new Map(headers);
      headers.delete('Host');
    }
    url = next;
  }
}

/** kube's HTTP probe: 200–399 succeed (3xx as a warning when a redirect was not followed). */
export async function httpProbe(req: HttpGetRequest, timeoutMs: number): Promise<ProbeOutcome> {
  let res: HttpGetResponse;
  try {
    res = await httpGet(req, timeoutMs);
  } catch (err) {
    if (err instanceof HttpGetError) return { result: 'failure', output: err.message };
    throw err;
  }
  if (res.status >= 200 && res.status < 400) {
    if (res.status >= 300)
      return { result: 'warning', output: `Probe terminated redirects, Response body: ${res.body}` };
    return { result: 'success', output: res.body };
  }
  // As kube: the failure text never carries the body (it may hold secrets).
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.status}` };
}
