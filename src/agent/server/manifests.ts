/**
 * The agent's manifest submission API (Capstan's design; the spec names the source but not its
 * shape). On the agent's HTTPS port, authenticated and authorized like every endpoint (kubelet's
 * `nodes/proxy` subresource, verb by method), and only with `--enable-debugging-handlers` (it
 * runs containers, as `/run` does):
 *
 * - `GET /manifests` → 200, `{"submissions": {"<name>": ["<namespace>/<pod>", ...]}}`;
 * - `PUT /manifests/<name>` with a Pod or a PodList (JSON or YAML, at most 1 MiB) → 200 with the
 *   PodList of the static pods it now runs (named `<pod>-<node>`, as static pods are); 400 with
 *   the reason when kube would refuse the manifest (`static pods may not reference secrets`,
 *   a syntax error...), and nothing changes; 413 when too large;
 * - `DELETE /manifests/<name>` → 200 (its pods stop), 404 when there is no such submission.
 *
 * `<name>` is a DNS label. With an API server, the pods get mirror pods like any static pod.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUBMISSION_NAME, type SubmissionSource } from '../sources/submissions.js';

const MAX_BODY = 1 << 20;

function reply(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
  });
  res.end(typeof body === 'string' ? `${body}\n` : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Serves `/manifests[/<name>]`; answers false for other paths. */
export async function serveManifests(
  source: SubmissionSource,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (path !== '/manifests' && !path.startsWith('/manifests/')) return false;
  const name = decodeURIComponent(path.slice('/manifests/'.length));
  const method = req.method ?? 'GET';
  if (path === '/manifests' || name === '') {
    if (method !== 'GET')
      reply(res, 405, 'method not allowed: GET /manifests, PUT or DELETE /manifests/<name>');
    else reply(res, 200, { submissions: source.list() });
    return true;
  }
  if (!SUBMISSION_NAME.test(name)) {
    reply(res, 400, `invalid submission name ${JSON.stringify(name)}: a DNS label`);
    return true;
  }
  if (method === 'DELETE') {
    if (source.delete(name)) reply(res, 200, { kind: 'Status', status: 'Success' });
    else reply(res, 404, `no submission ${name}`);
    return true;
  }
  if (method !== 'PUT') {
    reply(res, 405, 'method not allowed: PUT or DELETE /manifests/<name>');
    return true;
  }
  const body = await readBody(req);
  if (body === undefined) {
    reply(res, 413, `manifest larger than ${MAX_BODY} bytes`);
    return true;
  }
  try {
    const items = source.put(name, body);
    reply(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items });
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0] ?? '';
    console.error(`agent: submitted manifest ${name} refused: ${msg}`);
    reply(res, 400, msg);
  }
  return true;
}
