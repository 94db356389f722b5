/**
 * A small JSON-over-HTTPS client for the authenticators that call out (OIDC discovery and JWKS,
 * the TokenReview webhook): one request, a deadline, a size cap, TLS trust and client
 * credentials as given. Errors never carry the request body (it may hold a token).
 */
import { request } from 'node:https';

/** TLS settings of a call. */
export interface HttpsTrust {
  /** PEM CAs to trust instead of the system roots. */
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly insecureSkipVerify?: boolean;
}

/** A call's outcome. */
export interface JsonResponse {
  readonly status: number;
  readonly body: unknown;
}

const MAX_BYTES = 4 << 20;

/**
 * Sends `body` (JSON, or a GET without it) to `url`.
 * @throws Error for network and TLS failures, timeouts, oversized or non-JSON answers.
 */
export function httpsJson(
  url: string,
  options: HttpsTrust & {
    readonly method?: string;
    readonly body?: unknown;
    readonly headers?: Readonly<Record<string, string>>;
    readonly timeoutMs?: number;
  },
): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') {
      reject(new Error(`${target.origin}: only https URLs are allowed`));
      return;
    }
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const req = request(
      target,
      {
        method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.headers ?? {}),
        },
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        ...(options.cert === undefined ? {} : { cert: options.cert }),
        ...(options.key === undefined ? {} : { key: options.key }),
        rejectUnauthorized: options.insecureSkipVerify !== true,
        agent: false,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) {
            req.destroy(new Error(`${target.origin}: response larger than ${MAX_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({
              status: res.statusCode ?? 0,
              body: text === '' ? undefined : (JSON.parse(text) as unknown),
            });
          } catch {
            reject(
              new Error(
                `${target.origin}${target.pathname}: answered ${res.statusCode} with a non-JSON body`,
              ),
            );
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${target.origin}: request timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
