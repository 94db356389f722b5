/**
 * Cost of field management on a large object: a Deployment with 50 containers (each with two
 * ports, two env vars, args and resources). Compares server-side apply (merge, prune, ownership,
 * conflicts) with the managedFields work of a plain update (compare and ownership only), both
 * on an object already tracked, changing one image; and an apply that drops a container, which
 * prunes. Run: `npx vitest bench test/apply --run`.
 */
import { bench, describe } from 'vitest';
import { applyOperation, updateOperation } from '../../src/apply/index.js';
import type { JsonMap } from '../../src/apply/value.js';
import { DEPLOYMENT, deployment, fiftyContainers, podSpec } from './support.js';

function bigDeployment(image: (i: number) => string): JsonMap {
  const containers = fiftyContainers(image);
  return deployment(
    { replicas: 3, ...podSpec(containers) },
    { labels: { app: 'web', tier: 'x' } },
  ) as JsonMap;
}

const NOW = new Date('2024-05-01T12:00:00Z');
const config = bigDeployment(() => 'img:1');
const changed = bigDeployment((i) => (i === 25 ? 'img:2' : 'img:1'));
const dropped = {
  ...config,
  spec: {
    ...(config['spec'] as JsonMap),
    template: {
      spec: {
        containers: (
          config['spec'] as { template: { spec: { containers: JsonMap[] } } }
        ).template.spec.containers.slice(1),
      },
    },
  },
} as JsonMap;
const common = { type: DEPLOYMENT, apiVersion: 'apps/v1', now: NOW } as const;
const applied = applyOperation({
  ...common,
  live: undefined,
  config,
  kind: 'Deployment',
  manager: 'kubectl',
  force: false,
}).object;
const updated = updateOperation({
  ...common,
  oldObject: undefined,
  newObject: config,
  manager: 'kubectl-create',
}).object;

// Warm up first: the first benchmark of a file otherwise pays for JIT compilation of the walkers.
const OPTIONS = { time: 1500, warmupIterations: 30 };

describe('50-container Deployment, one image changed', () => {
  bench(
    'apply (merge + prune + ownership)',
    () => {
      applyOperation({
        ...common,
        live: applied,
        config: changed,
        kind: 'Deployment',
        manager: 'kubectl',
        force: false,
      });
    },
    OPTIONS,
  );
  bench(
    'apply dropping a container (prune)',
    () => {
      applyOperation({
        ...common,
        live: applied,
        config: dropped,
        kind: 'Deployment',
        manager: 'kubectl',
        force: false,
      });
    },
    OPTIONS,
  );
  bench(
    're-apply unchanged (no-op detection)',
    () => {
      applyOperation({
        ...common,
        live: applied,
        config,
        kind: 'Deployment',
        manager: 'kubectl',
        force: false,
      });
    },
    OPTIONS,
  );
  bench(
    'update managedFields (compare + ownership)',
    () => {
      updateOperation({ ...common, oldObject: updated, newObject: changed, manager: 'kubectl-edit' });
    },
    OPTIONS,
  );
});
