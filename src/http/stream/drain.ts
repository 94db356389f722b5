/**
 * The raw connection under a framed protocol (SPDY/3.1, WebSocket), shared by both framings:
 * how it starts to flow after the upgrade, and back-pressure on it.
 */
import type { Duplex } from 'node:stream';

/**
 * Feeds `conn`'s bytes (first `head`, those read with the HTTP head) to `receive`, calls `gone`
 * when the connection closes, ends or fails, and makes it flow: whoever read the HTTP head may
 * have left it paused.
 */
export function attachConnection(
  conn: Duplex,
  head: Buffer,
  receive: (chunk: Buffer) => void,
  gone: () => void,
): void {
  conn.on('data', receive);
  conn.on('close', gone);
  conn.on('end', gone);
  conn.on('error', gone);
  if (head.length > 0) receive(head);
  conn.resume();
}

/**
 * Resolves when `conn` can take more writes: at once when its buffer is not full, else on its
 * next `drain`, or when it closes (nothing more will drain then).
 */
export function whenDrained(conn: Duplex): Promise<void> {
  if (conn.destroyed || !conn.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      conn.off('drain', done);
      conn.off('close', done);
      resolve();
    };
    conn.on('drain', done);
    conn.on('close', done);
  });
}
