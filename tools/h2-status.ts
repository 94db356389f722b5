/**
 * One request on an HTTP/2 session, for the bench tools (tools/bench-*.ts): the body is read
 * and dropped, and the promise resolves with the response's status.
 */
import type { ClientHttp2Session } from 'node:http2';

/** Sends `method path` (with a JSON `body` when given) and resolves with the status. */
export function sendForStatus(
  session: ClientHttp2Session,
  method: string,
  path: string,
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = session.request({
      ':method': method,
      ':path': path,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    });
    let status = 0;
    s.on('response', (h) => (status = Number(h[':status'])));
    s.on('data', () => undefined);
    s.on('end', () => resolve(status));
    s.on('error', reject);
    s.end(body);
  });
}
