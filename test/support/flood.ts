/**
 * A flood of concurrent requests on one HTTP/2 connection, for overload tests: each request's
 * status and `Retry-After`.
 */
import { connect } from 'node:http2';
import type { AdminTls } from './https.js';

/** One answer of {@link flood}. */
export interface FloodResult {
  readonly status: number;
  readonly retryAfter?: string;
}

/** `n` concurrent GETs of `path` on `url`, on one HTTP/2 connection as `tls`'s user. */
export function flood(url: string, tls: AdminTls, path: string, n: number): Promise<FloodResult[]> {
  const session = connect(url, tls);
  session.on('error', () => undefined);
  const one = (): Promise<FloodResult> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': path });
      let status = 0;
      let retryAfter: string | undefined;
      stream.on('response', (h) => {
        status = Number(h[':status']);
        retryAfter = h['retry-after'];
      });
      stream.on('data', () => undefined);
      stream.on('end', () => resolve(retryAfter === undefined ? { status } : { status, retryAfter }));
      stream.on('error', reject);
    });
  return Promise.all(Array.from({ length: n }, one)).finally(() => session.close());
}
