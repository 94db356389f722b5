/**
 * The authorization matrix: fast-check builds random RBAC worlds (Roles, ClusterRoles with
 * labels and an aggregated ClusterRole, RoleBindings and ClusterRoleBindings naming users,
 * groups and a service account, rules with wildcards, subresources, resourceNames and
 * nonResourceURLs) and random requests; each world is written to a real server, and every
 * request is sent for real (as the generated user, through impersonation by the admin). The
 * reference model (rbac-model.ts), fed with every RBAC object the server holds (the bootstrap
 * policy included), must agree on each: no escape (allowed where the model denies) and no false
 * denial, over more than 10,000 requests. Run with `CAPSTAN_AUTHZ_BUG=ignore-resource-names` to
 * see it catch a planted evaluation bug.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTls, startTestServer, type TestServer } from '../support/server.js';
import { waitReady } from '../support/users.js';
import {
  canonicalList,
  effectiveClusterRules,
  modelAllows,
  modelWhy,
  type MBinding,
  type MRequest,
  type MRole,
  type MRule,
  type MWorld,
} from './rbac-model.js';

const WORLDS = 5;
const REQUESTS_PER_WORLD = 2_100;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const GEN_LABEL = 'matrix';

const VERBS = ['get', 'list', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const GROUPS = ['', 'apps', 'example.com'];
const RESOURCES = ['pods', 'secrets', 'widgets'];
const SUBRESOURCES = ['', 'log', 'status'];
const NAMESPACES = ['a', 'b'];
const OBJECT_NAMES = ['n1', 'n2', 'n3'];
const USERS = ['u0', 'u1', 'u2', 'system:serviceaccount:a:sa0'];
const USER_GROUPS = ['g0', 'g1', 'g2'];
const PATHS = ['/custom/x', '/custom/y/z', '/metrics', '/healthz', '/version', '/other'];

let server: TestServer;
let session: ClientHttp2Session;

function send(
  method: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': method,
      ':path': path,
      accept: 'application/json',
      ...headers,
    });
    let status = 0;
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: string) => (text += c));
    stream.on('end', () => resolve({ status, body: text }));
    stream.on('error', reject);
    stream.end(body);
  });
}

async function admin(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return send(
    method,
    path,
    body === undefined ? {} : { 'content-type': 'application/json' },
    body === undefined ? undefined : JSON.stringify(body),
  );
}

// ---- generators ---------------------------------------------------------------------------------

const sub = <T>(xs: readonly T[]): fc.Arbitrary<T[]> => fc.subarray([...xs], { minLength: 1 });

const resourceRule: fc.Arbitrary<MRule> = fc.record({
  verbs: sub([...VERBS, '*']),
  apiGroups: sub([...GROUPS, '*']),
  resources: sub(['pods', 'secrets', 'widgets', 'pods/log', 'pods/status', '*', '*/status']),
  resourceNames: fc.oneof(fc.constant([] as string[]), sub(OBJECT_NAMES)),
});
const pathRule: fc.Arbitrary<MRule> = fc.record({
  verbs: sub(['get', 'post', '*']),
  nonResourceURLs: sub(['/custom/*', '/metrics', '/custom/x', '/healthz', '*']),
});

interface GenRole {
  namespace: string;
  labels: boolean;
  rules: MRule[];
}
interface GenBinding {
  namespace: string;
  roleKind: 'Role' | 'ClusterRole';
  role: number;
  subjects: { kind: string; name: string; namespace?: string }[];
}

const subject = fc.oneof(
  fc.constantFrom(...USERS.slice(0, 3)).map((name) => ({ kind: 'User', name })),
  fc.constantFrom(...USER_GROUPS).map((name) => ({ kind: 'Group', name })),
  fc.constantFrom(
    { kind: 'ServiceAccount', name: 'sa0', namespace: 'a' },
    { kind: 'ServiceAccount', name: 'sa0' },
  ),
);

const worldArb = fc.record({
  clusterRoles: fc.array(
    fc.record({
      namespace: fc.constant(''),
      labels: fc.boolean(),
      rules: fc.array(fc.oneof({ weight: 4, arbitrary: resourceRule }, { weight: 1, arbitrary: pathRule }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  roles: fc.array(
    fc.record({
      namespace: fc.constantFrom(...NAMESPACES),
      labels: fc.constant(false),
      rules: fc.array(resourceRule, { minLength: 1, maxLength: 3 }),
    }),
    { maxLength: 5 },
  ),
  bindings: fc.array(
    fc.record({
      namespace: fc.constantFrom('', ...NAMESPACES),
      roleKind: fc.constantFrom<'Role' | 'ClusterRole'>('Role', 'ClusterRole'),
      role: fc.nat({ max: 7 }),
      subjects: fc.array(subject, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});

const requestArb: fc.Arbitrary<MRequest> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({
      user: fc.record({ name: fc.constantFrom(...USERS), groups: fc.subarray(USER_GROUPS) }),
      verb: fc.constantFrom(...VERBS),
      resource: fc.record({
        group: fc.constantFrom(...GROUPS),
        resource: fc.constantFrom(...RESOURCES),
        subresource: fc.constantFrom(...SUBRESOURCES),
        namespace: fc.constantFrom('', ...NAMESPACES),
        name: fc.constantFrom(...OBJECT_NAMES),
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      user: fc.record({ name: fc.constantFrom(...USERS), groups: fc.subarray(USER_GROUPS) }),
      verb: fc.constantFrom('get', 'post'),
      path: fc.constantFrom(...PATHS),
    }),
  },
);

// ---- applying a world ---------------------------------------------------------------------------

function meta(name: string, namespace: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return { name, ...(namespace === '' ? {} : { namespace }), labels: { [GEN_LABEL]: 'gen', ...labels } };
}

async function must(p: Promise<{ status: number; body: string }>, want: number[]): Promise<void> {
  const r = await p;
  if (!want.includes(r.status)) throw new Error(`unexpected ${r.status}: ${r.body}`);
}

async function clearWorld(): Promise<void> {
  const sel = `?labelSelector=${GEN_LABEL}%3Dgen`;
  await must(admin('DELETE', `${RBAC}/clusterrolebindings${sel}`), [200]);
  await must(admin('DELETE', `${RBAC}/clusterroles${sel}`), [200]);
  for (const ns of NAMESPACES) {
    await must(admin('DELETE', `${RBAC}/namespaces/${ns}/rolebindings${sel}`), [200]);
    await must(admin('DELETE', `${RBAC}/namespaces/${ns}/roles${sel}`), [200]);
  }
}

async function applyWorld(gen: {
  clusterRoles: GenRole[];
  roles: GenRole[];
  bindings: GenBinding[];
}): Promise<void> {
  const writes: Promise<void>[] = [];
  gen.clusterRoles.forEach((r, i) => {
    writes.push(
      must(
        admin('POST', `${RBAC}/clusterroles`, {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: meta(`cr${i}`, '', r.labels ? { agg: 'yes' } : {}),
          rules: r.rules,
        }),
        [201],
      ),
    );
  });
  writes.push(
    must(
      admin('POST', `${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: meta('cr-agg', ''),
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'yes' } }] },
        rules: [],
      }),
      [201],
    ),
  );
  gen.roles.forEach((r, i) => {
    writes.push(
      must(
        admin('POST', `${RBAC}/namespaces/${r.namespace}/roles`, {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: meta(`r${i}`, r.namespace),
          rules: r.rules,
        }),
        [201],
      ),
    );
  });
  gen.bindings.forEach((b, i) => {
    const cluster = b.namespace === '';
    const roleKind = cluster ? 'ClusterRole' : b.roleKind;
    // Role indexes past the generated ones name missing roles; 7 names the aggregated ClusterRole.
    const roleName = roleKind === 'ClusterRole' ? (b.role === 7 ? 'cr-agg' : `cr${b.role}`) : `r${b.role}`;
    // A ClusterRoleBinding's service account subjects must name their namespace.
    const subjects = b.subjects.map((s) =>
      s.kind === 'ServiceAccount'
        ? cluster
          ? { ...s, namespace: 'a' }
          : s
        : { ...s, apiGroup: 'rbac.authorization.k8s.io' },
    );
    const body = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: cluster ? 'ClusterRoleBinding' : 'RoleBinding',
      metadata: meta(`b${i}`, b.namespace),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
      subjects,
    };
    writes.push(
      must(
        admin(
          'POST',
          cluster ? `${RBAC}/clusterrolebindings` : `${RBAC}/namespaces/${b.namespace}/rolebindings`,
          body,
        ),
        [201],
      ),
    );
  });
  await Promise.all(writes);
}

interface Stored {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: MRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] } | null;
  roleRef?: { kind: 'Role' | 'ClusterRole'; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[] | null;
}

async function listAll(path: string): Promise<Stored[]> {
  // A paged list is read from storage, not from the watch cache.
  const r = await admin('GET', `${path}?limit=100000`);
  if (r.status !== 200) throw new Error(`list ${path}: ${r.status}`);
  return (JSON.parse(r.body) as { items: Stored[] }).items;
}

/** The world the server holds (generated and bootstrap objects). */
async function readWorld(): Promise<MWorld> {
  const role = (o: Stored): MRole => ({
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    labels: o.metadata.labels ?? {},
    rules: o.rules ?? [],
    ...(o.aggregationRule?.clusterRoleSelectors === undefined
      ? {}
      : { aggregate: o.aggregationRule.clusterRoleSelectors.map((s) => s.matchLabels ?? {}) }),
  });
  const binding = (o: Stored): MBinding => ({
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    roleKind: o.roleRef?.kind ?? 'ClusterRole',
    roleName: o.roleRef?.name ?? '',
    subjects: o.subjects ?? [],
  });
  return {
    clusterRoles: (await listAll(`${RBAC}/clusterroles`)).map(role),
    roles: (await listAll(`${RBAC}/roles`)).map(role),
    bindings: [
      ...(await listAll(`${RBAC}/clusterrolebindings`)),
      ...(await listAll(`${RBAC}/rolebindings`)),
    ].map(binding),
  };
}

/** Waits until the aggregation controller has filled every aggregated ClusterRole as the model would. */
async function awaitAggregation(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const world = await readWorld();
    const want = effectiveClusterRules(world);
    const pending = world.clusterRoles.filter(
      (r) => r.aggregate !== undefined && canonicalList(r.rules) !== canonicalList(want.get(r.name) ?? []),
    );
    if (pending.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`aggregation never converged: ${pending.map((r) => r.name).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let generation = 0;

/**
 * Waits until the server's RBAC index has applied every write so far (one sentinel per kind).
 * The server already makes a denial wait for the index to catch up with the store (grants are
 * read-your-writes: src/authz/rbac-authorizer.ts), but an allow is answered from the index as
 * it is, as kube-apiserver does: a revocation (the previous world's deletions) may still be in
 * flight, and an allow through it would count as an escape. Hence this wait before sending.
 */
async function awaitIndex(): Promise<void> {
  const n = `sentinel-${++generation}`;
  const rule = (resource: string): MRule[] => [
    { apiGroups: [''], resources: [resource], verbs: ['get'], resourceNames: [n] },
  ];
  const sentinelSubject = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'sentinel' }];
  await must(
    admin('POST', `${RBAC}/namespaces/a/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(n, 'a'),
      rules: rule('configmaps'),
    }),
    [201],
  );
  await must(
    admin('POST', `${RBAC}/namespaces/a/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(n, 'a'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: n },
      subjects: sentinelSubject,
    }),
    [201],
  );
  await must(
    admin('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(n, ''),
      rules: rule('nodes'),
    }),
    [201],
  );
  await must(
    admin('POST', `${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(n, ''),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: n },
      subjects: sentinelSubject,
    }),
    [201],
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const cm = await send('GET', `/api/v1/namespaces/a/configmaps/${n}`, { 'impersonate-user': 'sentinel' });
    const node = await send('GET', `/api/v1/nodes/${n}`, { 'impersonate-user': 'sentinel' });
    if (cm.status !== 403 && node.status !== 403) return;
    if (Date.now() > deadline) throw new Error('the RBAC index never caught up');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The resourceVersion of the aggregated ClusterRole. */
async function aggregatedVersion(): Promise<string> {
  const r = await admin('GET', `${RBAC}/clusterroles/cr-agg`);
  return (JSON.parse(r.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/**
 * Aggregation is asynchronous (kube's controller too) and may rewrite the aggregated role more
 * than once while it catches up: settle it, then sync the index, until the role was not written
 * again meanwhile (so the index holds its final rules).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await awaitAggregation();
    const before = await aggregatedVersion();
    await awaitIndex();
    if ((await aggregatedVersion()) === before) return;
  }
  throw new Error('the aggregated ClusterRole never settled');
}

// ---- sending requests ---------------------------------------------------------------------------

function requestOf(req: MRequest): { method: string; path: string; body?: string; contentType?: string } {
  if (req.resource === undefined) return { method: req.verb.toUpperCase(), path: req.path ?? '/' };
  const r = req.resource;
  const prefix = r.group === '' ? '/api/v1' : `/apis/${r.group}/v1`;
  const collection = `${prefix}${r.namespace === '' ? '' : `/namespaces/${r.namespace}`}/${r.resource}`;
  const item = `${collection}/${r.name}${r.subresource === '' ? '' : `/${r.subresource}`}`;
  switch (req.verb) {
    case 'list':
      return { method: 'GET', path: collection };
    case 'deletecollection':
      return { method: 'DELETE', path: collection };
    case 'create':
      return { method: 'POST', path: collection, body: '{}', contentType: 'application/json' };
    case 'get':
      return { method: 'GET', path: item };
    case 'update':
      return { method: 'PUT', path: item, body: '{}', contentType: 'application/json' };
    case 'patch':
      return { method: 'PATCH', path: item, body: '{}', contentType: 'application/merge-patch+json' };
    default:
      return { method: 'DELETE', path: item };
  }
}

/** The request as the model sees it: attributes as the server derives them, user as impersonated. */
function modelRequest(req: MRequest): MRequest {
  const r = req.resource;
  const sa = req.user.name.startsWith('system:serviceaccount:');
  const groups = [
    ...(sa ? ['system:serviceaccounts', 'system:serviceaccounts:a'] : []),
    ...req.user.groups,
    'system:authenticated',
  ];
  const user = { name: req.user.name, groups };
  if (r === undefined) return { ...req, user };
  const collectionVerb = req.verb === 'list' || req.verb === 'deletecollection' || req.verb === 'create';
  return {
    ...req,
    user,
    resource: { ...r, name: collectionVerb ? '' : r.name, subresource: collectionVerb ? '' : r.subresource },
  };
}

interface Outcome {
  escapes: string[];
  falseDenials: string[];
  serverErrors: string[];
}

async function runWorld(world: MWorld, requests: readonly MRequest[], out: Outcome): Promise<void> {
  const rules = effectiveClusterRules(world);
  const BATCH = 64;
  const ask = async (
    raw: MRequest,
  ): Promise<{ label: string; allowed: boolean; want: boolean; body: string; req: MRequest }> => {
    const req = modelRequest(raw);
    const http = requestOf(req);
    const headers: Record<string, string | string[]> = { 'impersonate-user': req.user.name };
    if (raw.user.groups.length > 0) headers['impersonate-group'] = raw.user.groups;
    if (http.contentType !== undefined) headers['content-type'] = http.contentType;
    const res = await send(http.method, http.path, headers, http.body);
    const label = `${req.user.name}[${raw.user.groups.join(',')}] ${http.method} ${http.path} (${req.verb})`;
    if (res.status >= 500) out.serverErrors.push(`${label}: ${res.status} ${res.body}`);
    return { label, allowed: res.status !== 403, want: modelAllows(world, rules, req), body: res.body, req };
  };
  for (let i = 0; i < requests.length; i += BATCH) {
    for (const a of await Promise.all(requests.slice(i, i + BATCH).map(ask))) {
      if (a.allowed && !a.want) out.escapes.push(a.label);
      if (!a.allowed && a.want) {
        out.falseDenials.push(`${a.label}: ${modelWhy(world, rules, a.req)}: ${a.body.slice(0, 200)}`);
      }
    }
  }
}

beforeAll(async () => {
  server = await startTestServer({ args: ['--authorization-mode=RBAC'] });
  await waitReady(server);
  session = connect(new URL(server.url).origin, adminTls(server.kubeconfigPath));
  session.on('error', () => undefined);
  for (const ns of NAMESPACES) {
    await must(
      admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      [201],
    );
  }
}, 60_000);
afterAll(async () => {
  session?.close();
  await server?.close();
});

describe('authorization matrix', () => {
  it(`agrees with the reference model on ${WORLDS * REQUESTS_PER_WORLD} requests over ${WORLDS} random worlds`, async () => {
    const out: Outcome = { escapes: [], falseDenials: [], serverErrors: [] };
    let sent = 0;
    await fc
      .assert(
        fc.asyncProperty(
          worldArb,
          fc.array(requestArb, { minLength: REQUESTS_PER_WORLD, maxLength: REQUESTS_PER_WORLD }),
          async (gen, requests) => {
            await clearWorld();
            await applyWorld(gen);
            await settle();
            const world = await readWorld();
            await runWorld(world, requests, out);
            sent += requests.length;
            return out.escapes.length === 0 && out.falseDenials.length === 0 && out.serverErrors.length === 0;
          },
        ),
        { numRuns: WORLDS, endOnFailure: true },
      )
      .catch((err: unknown) => {
        throw new Error(
          `escapes ${out.escapes.length}, false denials ${out.falseDenials.length}, 5xx ${out.serverErrors.length}\n` +
            [
              ...out.escapes.slice(0, 5),
              ...out.falseDenials.slice(0, 5),
              ...out.serverErrors.slice(0, 3),
            ].join('\n') +
            `\ncause: ${String((err as { cause?: unknown }).cause ?? err).slice(0, 3000)}`,
        );
      });
    expect(sent).toBeGreaterThanOrEqual(10_000);
    expect(out).toEqual({ escapes: [], falseDenials: [], serverErrors: [] });
  }, 300_000);
});
