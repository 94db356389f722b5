/** Helpers of the authorization tests (users and readiness: test/support/users.ts). */
import { adminFetch, type AdminTls, type TestServer } from '../support/server.js';

/** A JSON request with `tls`; the parsed body (or text) and the status. */
export async function call(
  server: TestServer,
  tls: AdminTls,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(r.body) as Record<string, unknown>;
  } catch {
    parsed = { text: r.body };
  }
  return { status: r.status, body: parsed };
}
