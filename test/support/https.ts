/**
 * Raw HTTPS to a test server with the admin kubeconfig's credentials (or none, or others), over
 * HTTP/1.1 or HTTP/2, for tests that check exact status codes, headers and bodies.
 */
import { connect } from 'node:http2';
import { request } from 'node:https';
import { readKubeconfigCredentials } from '../../src/pki/kubeconfig-credentials.js';

/** TLS credentials: the CA to trust and, optionally, a client certificate. */
export interface AdminTls {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

/** The CA and admin client certificate embedded in a kubeconfig written by the server. */
export function adminTls(kubeconfigPath: string): Required<AdminTls> {
  const { ca, cert, key } = readKubeconfigCredentials(kubeconfigPath);
  if (ca === undefined || cert === undefined || key === undefined)
    throw new Error(`kubeconfig ${kubeconfigPath} lacks the CA or the client certificate`);
  return { ca, cert, key };
}

/** A whole response. */
export interface FetchResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
  /** `h2` or `http/1.1`. */
  readonly protocol: string;
}

/** Options of {@link adminFetch}. */
export interface FetchOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Use HTTP/2 (default) or HTTP/1.1. */
  readonly http2?: boolean;
}

/** One request to `url` (absolute) with `tls`; resolves with the whole response. */
export function adminFetch(url: string, tls: AdminTls, options: FetchOptions = {}): Promise<FetchResult> {
  const method = options.method ?? 'GET';
  const headers = { ...(options.headers ?? {}) };
  if (options.http2 === false) {
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers, ...tls, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, protocol: 'http/1.1' }),
        );
      });
      req.on('error', reject);
      req.end(options.body);
    });
  }
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const session = connect(target.origin, { ...tls });
    session.on('error', reject);
    const stream = session.request({
      ':method': method,
      ':path': target.pathname + target.search,
      ...headers,
    });
    let status = 0;
    let responseHeaders: Record<string, string | string[] | undefined> = {};
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => {
      status = Number(h[':status']);
      responseHeaders = h;
    });
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      session.close();
      resolve({ status, headers: responseHeaders, body, protocol: 'h2' });
    });
    stream.on('error', (err: Error) => {
      session.close();
      reject(err);
    });
    stream.end(options.body);
  });
}

/** A response whose body was kept as bytes (protobuf, gzip). */
export interface BytesResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** One HTTP/1.1 request to `url` (absolute) with `tls`; the body comes back as bytes. */
export function adminFetchBytes(
  url: string,
  tls: AdminTls,
  options: Omit<FetchOptions, 'http2'> = {},
): Promise<BytesResult> {
  return new Promise((resolve, reject) => {
    const headers = { ...(options.headers ?? {}) };
    const req = request(url, { method: options.method ?? 'GET', headers, ...tls, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A response whose body was read as JSON (`{}` when it is not JSON). */
export interface JsonResult {
  readonly status: number;
  readonly headers: FetchResult['headers'];
  readonly json: Record<string, unknown>;
  /** The body as sent. */
  readonly text: string;
}

/**
 * One `method` request to `url` with `tls`: `body` is sent as is when a string, else as JSON,
 * with `content-type: application/json` unless `headers` say otherwise.
 */
export async function adminJson(
  url: string,
  tls: AdminTls,
  method = 'GET',
  body?: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<JsonResult> {
  const res = await adminFetch(url, tls, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, json, text: res.body };
}
