/**
 * The REST client: {@link Client} owns one {@link Transport} (one HTTP/2 session per server) and
 * one token bucket; {@link ResourceClient}s built from it speak one resource's verbs. Bodies are
 * JSON, parsed once; every non-2xx becomes an {@link ApiStatusError}.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import type { ObjectMeta } from '../api/types/meta-v1.js';
import { DEFAULT_BURST, DEFAULT_QPS, type ClientConfig } from './config.js';
import { ApiStatusError } from './errors.js';
import { TokenBucket } from './rate-limit.js';
import type { ResourceRef } from './resources.js';
import { ResourceClient } from './resource-client.js';
import { Transport } from './transport.js';

export { ResourceClient } from './resource-client.js';
export type {
  DeleteOptions,
  ListOptions,
  ObjectList,
  PatchOptions,
  WatchOptions,
  WriteOptions,
} from './resource-client.js';

/** What every API object has; every generated kind satisfies it. */
export interface TypedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A raw request ({@link Client.request}). */
export interface RawRequest {
  method: string;
  /** From the server root (`/api/v1/pods`), without the query. */
  path: string;
  query?: Record<string, string>;
  /** JSON-encoded unless a Buffer or string (then sent as is with `contentType`). */
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** A raw response. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The query string (with `?`) of `query`, '' when empty. */
export function queryString(query: Record<string, string> | undefined): string {
  if (query === undefined) return '';
  const q = new URLSearchParams(query).toString();
  return q === '' ? '' : `?${q}`;
}

/** A client of one API server. Close it when done. */
export class Client {
  readonly config: ClientConfig;
  /** The transport, shared by every resource client and watch of this Client. */
  readonly transport: Transport;
  /** Client-side QPS/burst; every request but watches waits for it. */
  readonly limiter: TokenBucket;
  readonly #resources = new Map<string, ResourceClient<TypedObject>>();

  constructor(config: ClientConfig) {
    this.config = config;
    this.transport = new Transport(config);
    this.limiter = new TokenBucket(config.qps ?? DEFAULT_QPS, config.burst ?? DEFAULT_BURST);
  }

  /** The (cached) client of `ref`'s resource. */
  resource<T extends TypedObject>(ref: ResourceRef): ResourceClient<T> {
    const key = `${ref.group}/${ref.version}/${ref.resource}`;
    let rc = this.#resources.get(key);
    if (rc === undefined) {
      rc = new ResourceClient<TypedObject>(this, ref);
      this.#resources.set(key, rc);
    }
    return rc as unknown as ResourceClient<T>;
  }

  /**
   * A raw request after the token bucket; resolves with any status.
   * @throws TransportError when the server cannot be reached or the request times out.
   */
  async request(opts: RawRequest): Promise<RawResponse> {
    await this.limiter.wait(opts.signal);
    let body: Buffer | string | undefined;
    let contentType = opts.contentType;
    if (opts.body !== undefined) {
      if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) {
        body = opts.body;
      } else {
        body = JSON.stringify(opts.body);
        contentType ??= 'application/json';
      }
    }
    return this.transport.request({
      method: opts.method,
      path: opts.path + queryString(opts.query),
      headers: {
        accept: opts.accept ?? 'application/json',
        ...(contentType === undefined ? {} : { 'content-type': contentType }),
      },
      ...(body === undefined ? {} : { body }),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
  }

  /**
   * A request whose 2xx JSON body is returned parsed.
   * @throws ApiStatusError for any other status; TransportError as {@link request}.
   */
  async json<R>(opts: RawRequest, context: string): Promise<R> {
    const res = await this.request(opts);
    if (res.status < 200 || res.status > 299)
      throw ApiStatusError.fromResponse(res.status, res.body, context);
    return (res.body.length === 0 ? {} : JSON.parse(res.body.toString('utf8'))) as R;
  }

  /** Closes the connection; later requests fail with CLIENT_CLOSED. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
