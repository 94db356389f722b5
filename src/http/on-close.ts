/**
 * Work to do when a response closes: finished, aborted by the client, or ended after a hijack
 * (watches). Metrics, flow control, the request deadline and connection tracking each need it
 * on every request; they share one `close` listener per response, which calls them in the order
 * they were registered. A response already carries several listeners of its own, and each more
 * makes every request's close dearer.
 *
 * As with `once('close')`, work registered after the response closed is never called.
 */
import type { EventEmitter } from 'node:events';

const CLOSERS = Symbol('capstan.onClose');

type WithClosers = EventEmitter & { [CLOSERS]?: (() => void)[] };

/** Calls `fn` once when `response` (a raw HTTP/1.1 or HTTP/2 response) closes. */
export function onClose(response: EventEmitter, fn: () => void): void {
  const r = response as WithClosers;
  const closers = r[CLOSERS];
  if (closers !== undefined) {
    closers.push(fn);
    return;
  }
  const list = [fn];
  r[CLOSERS] = list;
  r.once('close', () => {
    for (const f of list) f();
  });
}
