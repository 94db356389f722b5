/**
 * `componentstatuses` (v1 ComponentStatus: deprecated since kube 1.19, still served, and what
 * `kubectl get cs` reads), as kube-apiserver's componentstatus storage answers it: never stored,
 * every read probes the components again, and the list is `controller-manager`, `scheduler`,
 * then `etcd-<i>` for each `--etcd-servers` entry.
 *
 * - `controller-manager` and `scheduler`: kube probes `https://127.0.0.1:10257/healthz` and
 *   `:10259/healthz` (certificates not checked). A 2xx or 3xx answer is healthy with its body as
 *   the message; anything else is unhealthy, the message saying why (kube's HTTP prober's
 *   texts, e.g. `Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect:
 *   connection refused`). When the component runs inside this server (`capstan server`'s
 *   in-process controller manager or scheduler) it is not probed: it is healthy, "ok", as its
 *   `/healthz` would say.
 * - `etcd-<i>`: the member's `/health`; healthy ("ok") when it says `"health":"true"`, else
 *   unhealthy with the reason as the error. The embedded store is not etcd: no entry.
 *
 * Items have no resourceVersion and a null creationTimestamp, lists no resourceVersion; label
 * and field selectors apply; `limit` is ignored and watch is refused, as in kube.
 */
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { methodNotAllowed, notFound } from '../api/errors.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { readCollectionRequest } from '../resource/list-options.js';
import { boolParam, type Query } from '../resource/query.js';
import type { KubeObject } from '../api/object.js';
import { JsonSource } from '../representation/source.js';

/** kube's probe timeout for component statuses. */
const PROBE_TIMEOUT_MS = 20_000;

/** What a probe found. */
interface Health {
  readonly healthy: boolean;
  readonly message: string;
  readonly error: string;
}

/** Which components run inside this server (read at each request: they start after the routes). */
export interface InProcessComponents {
  controllerManager: boolean;
  scheduler: boolean;
}

/** TLS files for `https://` etcd members (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`). */
export interface EtcdProbeTls {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** What {@link componentStatusEndpoint} probes. */
export interface ComponentStatusDeps {
  readonly etcdServers: readonly string[];
  readonly etcdTls: EtcdProbeTls;
  readonly inProcess: InProcessComponents;
}

/** Go's text for a refused dial (what kube's HTTP prober reports); Node's message otherwise. */
function dialError(err: NodeJS.ErrnoException, host: string, port: string): string {
  return err.code === 'ECONNREFUSED' ? `dial tcp ${host}:${port}: connect: connection refused` : err.message;
}

/** GET `url` (certificates unchecked unless `tls` gives a CA): status and body, or the failure's text. */
function get(
  url: string,
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } | undefined,
): Promise<{ status: number; body: string } | { failure: string }> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(
      u,
      {
        method: 'GET',
        timeout: PROBE_TIMEOUT_MS,
        ...(u.protocol === 'https:' ? { rejectUnauthorized: tls?.ca !== undefined, ...tls } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (err) => resolve({ failure: err.message }));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({
        failure: `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ failure: `Get "${url}": ${dialError(err, u.hostname, u.port)}` }),
    );
    req.end();
  });
}

/** kube's HTTP probe of a component's `/healthz`. */
async function probeComponent(port: number): Promise<Health> {
  const res = await get(`https://127.0.0.1:${port}/healthz`, undefined);
  if ('failure' in res) return { healthy: false, message: res.failure, error: '' };
  if (res.status >= 200 && res.status < 400) return { healthy: true, message: res.body, error: '' };
  return { healthy: false, message: `HTTP probe failed with statuscode: ${res.status}`, error: '' };
}

/**
 * An etcd member's `/health` (with the etcd client's TLS files for an `https://` member, read for
 * each probe, so rotated files are used, and without blocking the server while they are read).
 */
async function probeEtcd(endpoint: string, tls: EtcdProbeTls): Promise<Health> {
  let files: { ca?: Buffer; cert?: Buffer; key?: Buffer } | undefined;
  try {
    if (endpoint.startsWith('https://')) {
      files = {};
      if (tls.caFile !== '') files.ca = await readFile(tls.caFile);
      if (tls.certFile !== '') files.cert = await readFile(tls.certFile);
      if (tls.keyFile !== '') files.key = await readFile(tls.keyFile);
    }
  } catch (err) {
    return { healthy: false, message: '', error: (err as Error).message };
  }
  const res = await get(`${endpoint.replace(/\/+$/, '')}/health`, files);
  if ('failure' in res) return { healthy: false, message: '', error: res.failure };
  let health: unknown;
  try {
    health = (JSON.parse(res.body) as { health?: unknown }).health;
  } catch {
    health = undefined;
  }
  if (res.status === 200 && health === 'true') return { healthy: true, message: 'ok', error: '' };
  return { healthy: false, message: '', error: `unhealthy: ${res.status} ${res.body.trim()}` };
}

/** The ComponentStatus of `name` in kube's layout. */
function componentStatus(name: string, h: Health, withType: boolean): KubeObject {
  const condition = {
    type: 'Healthy',
    status: h.healthy ? 'True' : 'False',
    ...(h.message === '' ? {} : { message: h.message }),
    ...(h.error === '' ? {} : { error: h.error }),
  };
  return {
    ...(withType ? { kind: 'ComponentStatus', apiVersion: 'v1' } : {}),
    metadata: { name, creationTimestamp: null },
    conditions: [condition],
  };
}

/** The components by name, each with its probe, in kube's order. */
function probes(deps: ComponentStatusDeps): [string, () => Promise<Health>][] {
  const inProcess: Health = { healthy: true, message: 'ok', error: '' };
  return [
    [
      'controller-manager',
      () => (deps.inProcess.controllerManager ? Promise.resolve(inProcess) : probeComponent(10257)),
    ],
    ['scheduler', () => (deps.inProcess.scheduler ? Promise.resolve(inProcess) : probeComponent(10259))],
    ...deps.etcdServers.map((endpoint, i): [string, () => Promise<Health>] => [
      `etcd-${i}`,
      () => probeEtcd(endpoint, deps.etcdTls),
    ]),
  ];
}

/** The `componentstatuses` collection and its items (see the module comment). */
export function componentStatusEndpoint(deps: ComponentStatusDeps): CustomEndpoint {
  return {
    methods: ['GET'],
    items: true,
    handle: async ({ target, request, rep }) => {
      const query = request.query as Query;
      if (boolParam(query, 'watch')) {
        throw methodNotAllowed('watch is not supported on resources of kind "componentstatuses"', {
          kind: 'componentstatuses',
        });
      }
      const all = probes(deps);
      if (target.name !== undefined) {
        const found = all.find(([name]) => name === target.name);
        if (found === undefined) {
          throw notFound({ group: '', resource: 'componentstatuses', name: target.name });
        }
        const body = componentStatus(found[0], await found[1](), true);
        return { code: 200, body: Buffer.from(JSON.stringify(body)) };
      }
      // kube checks the list options as for any list, then ignores them: no version is read.
      const { selection } = readCollectionRequest(query, target.type, undefined, false);
      const items = await Promise.all(
        all.map(async ([name, probe]) => componentStatus(name, await probe(), false)),
      );
      const selected = items.filter((item) => selection.matches(item));
      const sources = selected.map((item) => new JsonSource(JSON.stringify(item)));
      return { code: 200, body: rep.list({ resourceVersion: '' }, sources), contentType: rep.contentType };
    },
  };
}
