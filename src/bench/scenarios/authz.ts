/**
 * `authz`: what authorization costs. Two servers are started side by side, one with
 * `--authorization-mode=AlwaysAllow`, one with `--authorization-mode=Node,RBAC` holding 1,000 extra
 * Roles and 1,000 RoleBindings (of other users) besides the one that grants the measured user.
 * Both get the same objects. A regular user (a client certificate from the server's CA, not
 * `system:masters`, which would skip the authorizer) then runs closed loops of ConfigMap GETs and
 * creates at the run's largest client count. Phases alternate, AlwaysAllow then RBAC, twice, so
 * that drift on a shared machine hits both; each row reports the RBAC / AlwaysAllow ratio.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../../pki/certificate.js';
import { readKubeconfigCredentials, type KubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import { count, createNamespace, populate, type ScenarioContext } from '../context.js';
import { closedLoop, type LoopResult } from '../load.js';
import { configMapBodies, JSON_TYPE } from '../objects.js';
import type { Row } from '../report.js';
import { spawnServer, type SpawnedServer } from '../server-process.js';
import { fmt } from '../stats.js';
import { loopFigures } from './crud.js';

/** Extra Roles and RoleBindings on each server. */
const EXTRA = 1_000;
/** ConfigMaps the GET loop reads. */
const OBJECTS = 100;
const USER = 'bench-user';
/** HTTP/2 connections of the measured user (the bench's default). */
const USER_SESSIONS = 2;
const RBAC_API = '/apis/rbac.authorization.k8s.io/v1';

interface Side {
  readonly label: string;
  readonly server: SpawnedServer;
  readonly user: BenchClient;
  readonly namespace: string;
}

/** A client certificate for `USER` from the CA in `<dataDir>/pki` (the side's `--cert-dir`). */
async function userCredentials(
  dataDir: string,
  admin: KubeconfigCredentials,
): Promise<KubeconfigCredentials> {
  const caPem = await readFile(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const privateKey = createPrivateKey(await readFile(join(dataDir, 'pki', 'ca.key'), 'utf8'));
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject: { commonName: USER, organizations: ['bench'] },
    publicKey: keys.publicKey,
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(caPem).raw),
      privateKey,
      publicKey: createPublicKey(privateKey),
    },
    usage: 'client',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 24 * 3_600_000),
  });
  return { ...admin, cert, key: privateKeyPem(keys.privateKey), token: undefined };
}

const json = (o: unknown): { body: string; discardBody: true } => ({
  body: JSON.stringify(o),
  discardBody: true,
});

/** The user's Role (get, create ConfigMaps) and its binding, then 1,000 of each for other users. */
async function rbacObjects(admin: BenchClient, ns: string): Promise<void> {
  const base = `${RBAC_API}/namespaces/${ns}`;
  const subject = (name: string): unknown[] => [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name },
  ];
  const role = (name: string, rules: unknown[]): unknown => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules,
  });
  const binding = (name: string, roleName: string, user: string): unknown => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
    subjects: subject(user),
  });
  await closedLoop(32, { maxOps: EXTRA }, async (i) => {
    const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`x${i}`] }];
    await admin.expect('POST', `${base}/roles`, 201, json(role(`r${i}`, rules)));
    await admin.expect('POST', `${base}/rolebindings`, 201, json(binding(`b${i}`, `r${i}`, `someone-${i}`)));
  });
  const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create'] }];
  await admin.expect('POST', `${base}/roles`, 201, json(role('bench-user', rules)));
  await admin.expect('POST', `${base}/rolebindings`, 201, json(binding('bench-user', 'bench-user', USER)));
}

async function startSide(
  ctx: ScenarioContext,
  serverArgs: readonly string[],
  dir: string,
  modes: string,
): Promise<Side> {
  const dataDir = join(dir, modes.replaceAll(',', '-'));
  const args = serverArgs.filter((a) => !a.startsWith('--authorization-') && !a.startsWith('--cert-dir'));
  // Its own CA (the bench user's certificate is signed with it), not the shared default dir.
  const server = await spawnServer({
    dataDir,
    extraArgs: [...args, `--cert-dir=${join(dataDir, 'pki')}`, `--authorization-mode=${modes}`],
  });
  const adminCreds = readKubeconfigCredentials(server.kubeconfigPath);
  const admin = new BenchClient(adminCreds, 2);
  let ok = false;
  try {
    const namespace = await createNamespace(admin, 'authz');
    await populate({ ...ctx, client: admin }, namespace, 'cm-', 0, OBJECTS);
    await rbacObjects(admin, namespace);
    const user = new BenchClient(await userCredentials(dataDir, adminCreds), USER_SESSIONS);
    // The grant must be in effect before measuring (RBAC's index is fed by a watch).
    for (let i = 0; ; i++) {
      const r = await user.request('GET', `/api/v1/namespaces/${namespace}/configmaps/cm-0`, {
        discardBody: true,
      });
      if (r.status === 200) break;
      if (i > 100) throw new Error(`${modes}: the bench user cannot read its ConfigMaps (HTTP ${r.status})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ok = true;
    return { label: modes, server, user, namespace };
  } finally {
    admin.close();
    if (!ok) await server.stop();
  }
}

/** Runs the two servers' phases and returns the rows. */
export async function authzScenario(ctx: ScenarioContext): Promise<Row[]> {
  const serverArgs = ctx.serverArgs;
  if (serverArgs === undefined)
    return [
      {
        scenario: 'authz',
        case: 'AlwaysAllow against Node,RBAC',
        subject: ctx.subject,
        figures: {},
        note: 'not measured: the scenario starts its own capstan servers, which cannot stand for this one',
      },
    ];
  const clients = Math.max(...ctx.sizes.clients);
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-authz-'));
  const sides: Side[] = [];
  try {
    ctx.progress(
      `authz: starting an AlwaysAllow and a Node,RBAC server (${count(EXTRA)} Roles and RoleBindings each)`,
    );
    sides.push(await startSide(ctx, serverArgs, dir, 'AlwaysAllow'));
    sides.push(await startSide(ctx, serverArgs, dir, 'Node,RBAC'));
    const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
    const results = new Map<string, { get: LoopResult[]; create: LoopResult[] }>();
    let created = 0;
    for (let round = 0; round < 2; round++) {
      for (const side of sides) {
        const base = `/api/v1/namespaces/${side.namespace}/configmaps`;
        const budget = { durationMs: ctx.sizes.durationMs };
        const get = await closedLoop(clients, budget, (n) =>
          side.user.expect('GET', `${base}/cm-${n % OBJECTS}`, 200, { discardBody: true }),
        );
        const create = await closedLoop(clients, budget, () =>
          side.user.expect('POST', base, 201, { body: bodies.body(`u-${created++}`), discardBody: true }),
        );
        const r = results.get(side.label) ?? { get: [], create: [] };
        r.get.push(get);
        r.create.push(create);
        results.set(side.label, r);
        ctx.progress(
          `  ${side.label} round ${round + 1}: get ${fmt(get.opsPerSec)}/s, create ${fmt(create.opsPerSec)}/s`,
        );
      }
    }
    return rowsOf(results, clients);
  } finally {
    for (const side of sides) {
      side.user.close();
      await side.server.stop();
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** Sums the rounds of a verb into one loop result (ops over the summed time). */
function merged(loops: readonly LoopResult[]): LoopResult {
  const ops = loops.reduce((n, l) => n + (l.opsPerSec * l.elapsedMs) / 1000, 0);
  const elapsedMs = loops.reduce((n, l) => n + l.elapsedMs, 0);
  // Latency quantiles are those of the last round (each round is a full closed loop).
  const last = loops[loops.length - 1] as LoopResult;
  return { opsPerSec: (ops * 1000) / elapsedMs, elapsedMs, latency: last.latency };
}

function rowsOf(results: Map<string, { get: LoopResult[]; create: LoopResult[] }>, clients: number): Row[] {
  const allow = results.get('AlwaysAllow');
  const rbac = results.get('Node,RBAC');
  if (allow === undefined || rbac === undefined) return [];
  const rows: Row[] = [];
  for (const verb of ['get', 'create'] as const) {
    const a = merged(allow[verb]);
    const r = merged(rbac[verb]);
    const c = `${verb}, ${clients} clients, ${count(EXTRA)} Roles+RoleBindings`;
    rows.push(
      { scenario: 'authz', case: c, subject: 'capstan AlwaysAllow', figures: loopFigures(a) },
      {
        scenario: 'authz',
        case: c,
        subject: 'capstan Node,RBAC',
        figures: loopFigures(r),
        ratios: [{ to: 'AlwaysAllow', value: r.opsPerSec / a.opsPerSec }],
      },
    );
  }
  return rows;
}
