/** Back-pressure on a raw connection, shared by the SPDY and WebSocket framings. */
import type { Duplex } from 'node:stream';

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
