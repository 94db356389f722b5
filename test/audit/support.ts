/**
 * Helpers of the audit tests: reading JSON audit logs, waiting for events, and HTTPS requests as
 * a token user or the admin with a chosen `Audit-ID` (the server honours it, so each test
 * request's events are found by their ID).
 */
import { existsSync, readFileSync } from 'node:fs';
import { adminFetch, adminTls, type FetchResult } from '../support/server.js';

/** One parsed event (loosely typed: tests check the wire). */
export type WireEvent = Record<string, unknown> & {
  auditID: string;
  stage: string;
  level: string;
  annotations?: Record<string, string>;
  objectRef?: Record<string, string>;
  responseStatus?: Record<string, unknown>;
  user: Record<string, unknown>;
  impersonatedUser?: Record<string, unknown>;
};

/** The events of a JSON-lines log file (none when it does not exist yet). */
export function readEvents(path: string): WireEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as WireEvent);
}

/** Polls `read` until `ready` holds (or `ms` pass), then returns the last read. */
export async function waitFor<T>(read: () => T, ready: (v: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  let v = read();
  while (!ready(v) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    v = read();
  }
  return v;
}

/** A request as `who` (`admin`, or a bearer token) with `Audit-ID: id`. */
export function send(
  url: string,
  kubeconfigPath: string,
  who: { token: string } | 'admin',
  id: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<FetchResult> {
  const tls = adminTls(kubeconfigPath);
  const contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
  return adminFetch(`${url}${path}`, who === 'admin' ? tls : { ca: tls.ca }, {
    method,
    headers: {
      'audit-id': id,
      'user-agent': 'audit-test/1.0',
      ...(who === 'admin' ? {} : { authorization: `Bearer ${who.token}` }),
      ...(body === undefined ? {} : { 'content-type': contentType }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
