/**
 * The ClusterRole aggregation controller, a client of a bare server (`--controllers=`): an
 * aggregated ClusterRole gets the rules of the roles its selectors pick (name order, each rule
 * once), follows their changes and deletions, and is written by server-side apply as
 * `clusterrole-aggregation-controller`; kube's bootstrap `admin`, `edit` and `view` (RBAC mode) get filled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterRole, PolicyRule } from '../../src/api/types/rbac-v1.js';
import { CLUSTER_ROLES, type ResourceClient } from '../../src/client/index.js';
import {
  FIELD_MANAGER,
  clusterRoleAggregationController,
} from '../../src/controllers/clusterrole-aggregation/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let roles: ResourceClient<ClusterRole>;

beforeAll(async () => {
  env = await startInfraEnv(
    [clusterRoleAggregationController],
    [],
    ['--controllers=', '--authorization-mode=Node,RBAC'],
  );
  roles = env.client.resource<ClusterRole>(CLUSTER_ROLES);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

const GET_PODS: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const LIST_CMS: PolicyRule = { verbs: ['list'], apiGroups: [''], resources: ['configmaps'] };
const WATCH_SECRETS: PolicyRule = { verbs: ['watch'], apiGroups: [''], resources: ['secrets'] };

async function rulesBecome(name: string, want: PolicyRule[]): Promise<ClusterRole> {
  return until(`${name}'s rules`, async () => {
    const r = await roles.get(name);
    return JSON.stringify(r.rules ?? []) === JSON.stringify(want) ? r : undefined;
  });
}

describe('clusterrole aggregation controller', () => {
  it("fills kube's bootstrap aggregated roles", async () => {
    for (const name of ['admin', 'edit', 'view']) {
      await until(
        `${name} filled`,
        async () => ((await roles.get(name)).rules ?? []).length > 5 || undefined,
      );
    }
  });

  it('aggregates the selected roles in name order, each rule once, and follows them', async () => {
    await roles.create({ metadata: { name: 'part-b', labels: { agg: 'yes' } }, rules: [LIST_CMS, GET_PODS] });
    await roles.create({ metadata: { name: 'part-a', labels: { agg: 'yes' } }, rules: [GET_PODS] });
    await roles.create({ metadata: { name: 'unrelated', labels: { agg: 'no' } }, rules: [WATCH_SECRETS] });
    await roles.create({
      metadata: { name: 'sum' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'yes' } }] },
    });
    const sum = await rulesBecome('sum', [GET_PODS, LIST_CMS]);
    expect(sum.metadata.managedFields?.some((f) => f.manager === FIELD_MANAGER)).toBe(true);

    const b = await roles.get('part-b');
    await roles.update({ ...b, rules: [WATCH_SECRETS] });
    await rulesBecome('sum', [GET_PODS, WATCH_SECRETS]);
    await roles.delete('part-a');
    await rulesBecome('sum', [WATCH_SECRETS]);
    expect(env.errors).toEqual([]);
  });
});
