/**
 * The bootstrap policy a started server creates equals kube-apiserver v1.33's, object for object:
 * fixtures/rbac/ holds what a fresh kube-apiserver v1.33.13 creates, in the shape of kube's
 * bootstrappolicy golden files (fixtures/rbac/README.md). Every ClusterRole, ClusterRoleBinding,
 * Role and RoleBinding labelled `kubernetes.io/bootstrapping=rbac-defaults` must be there with the
 * same labels, annotations, rules (in order), aggregationRule, roleRef and subjects, and nothing
 * more. Aggregated roles (admin, edit, view) are checked apart: kube-apiserver leaves their rules
 * to the controller manager, here the server's own aggregation controller fills them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { waitReady } from '../support/users.js';
import { call } from './support.js';

type Obj = Record<string, unknown> & {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: object };
  rules?: unknown[] | null;
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
};

const FIXTURES = join(import.meta.dirname, '../../fixtures/rbac');
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

function golden(...files: string[]): Obj[] {
  return files.flatMap((f) => (parse(readFileSync(join(FIXTURES, f), 'utf8')) as { items: Obj[] }).items);
}

/** The fields the golden files carry; empty lists and nulls dropped as Go's omitempty does. */
function wire(o: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = {
    apiVersion: o['apiVersion'],
    kind: o['kind'],
    metadata: {
      name: o.metadata.name,
      ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
      labels: o.metadata.labels ?? {},
      annotations: o.metadata.annotations ?? {},
    },
  };
  for (const key of ['aggregationRule', 'roleRef', 'subjects', 'rules']) {
    const v = o[key];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) continue;
    out[key] = v;
  }
  return out;
}

const key = (o: Obj): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

let server: TestServer;
let admin: AdminTls;

async function bootstrapped(resource: string): Promise<Obj[]> {
  const r = await call(server, admin, 'GET', `${RBAC}/${resource}?labelSelector=kubernetes.io/bootstrapping`);
  expect(r.status).toBe(200);
  return r.body['items'] as Obj[];
}

beforeAll(async () => {
  server = await startTestServer({ args: ['--authorization-mode=Node,RBAC'] });
  admin = adminTls(server.kubeconfigPath);
  await waitReady(server);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe("bootstrap policy equals kube-apiserver v1.33's", () => {
  const cases: [string, string[]][] = [
    ['clusterroles', ['cluster-roles.yaml', 'controller-roles.yaml']],
    ['clusterrolebindings', ['cluster-role-bindings.yaml', 'controller-role-bindings.yaml']],
    ['roles', ['namespace-roles.yaml']],
    ['rolebindings', ['namespace-role-bindings.yaml']],
  ];
  for (const [resource, files] of cases) {
    it(`${resource}: same objects, labels, annotations and content (${files.join(', ')})`, async () => {
      const want = golden(...files);
      expect(want.length).toBeGreaterThan(0);
      const got = new Map((await bootstrapped(resource)).map((o) => [key(o), o]));
      expect([...got.keys()].sort()).toEqual(want.map(key).sort());
      for (const w of want) {
        const g = got.get(key(w)) as Obj;
        // Aggregated roles: golden has no rules (kube's controller manager fills them later).
        const mine = w.aggregationRule === undefined ? wire(g) : { ...wire(g), rules: undefined };
        expect(JSON.parse(JSON.stringify(mine)), key(w)).toEqual(JSON.parse(JSON.stringify(wire(w))));
      }
    });
  }

  it('fills aggregated ClusterRoles with the rules of the roles they select, by name order', async () => {
    // The aggregation controller runs after the policy is in place: give it a moment.
    for (let i = 0; i < 50; i++) {
      try {
        await checkAggregated();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await checkAggregated();
  });
});

async function checkAggregated(): Promise<void> {
  {
    const roles = await bootstrapped('clusterroles');
    const aggregated = roles.filter((r) => r.aggregationRule !== undefined);
    expect(aggregated.map((r) => r.metadata.name).sort()).toEqual(['admin', 'edit', 'view']);
    for (const role of aggregated) {
      const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
      const selected = roles
        .filter((r) => r.metadata.name !== role.metadata.name)
        .filter((r) =>
          selectors.some((s) =>
            Object.entries(s.matchLabels).every(([k, v]) => r.metadata.labels?.[k] === v),
          ),
        )
        .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
      const want: unknown[] = [];
      const seen = new Set<string>();
      for (const r of selected) {
        for (const rule of r.rules ?? []) {
          const s = JSON.stringify(rule);
          if (!seen.has(s)) want.push(rule);
          seen.add(s);
        }
      }
      expect(want.length, role.metadata.name).toBeGreaterThan(5);
      expect(role.rules, role.metadata.name).toEqual(want);
    }
  }
}
