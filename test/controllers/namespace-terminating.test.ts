/**
 * Creates in a namespace being deleted: the server refuses them with kube's
 * `NamespaceTerminating` cause (`reason` on the wire), the shared helper recognises that refusal,
 * and the ReplicaSet controller stops there as kube's does: no failed sync, no retry loop.
 * A bare server and only the replicaset controller, so the namespace stays Terminating.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types/core-v1.js';
import type { ReplicaSet } from '../../src/api/types/apps-v1.js';
import { NAMESPACES, PODS, REPLICA_SETS } from '../../src/client/index.js';
import { replicaSetController } from '../../src/controllers/replicaset/index.js';
import { namespaceGoneOrTerminating, namespaceTerminating } from '../../src/controllers/shared/namespaces.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
const NS = 'going-away';
const SPEC = { containers: [{ name: 'c', image: 'busybox' }] };
const pod = (name: string): Pod => ({ metadata: { name }, spec: SPEC });

beforeAll(async () => {
  env = await startInfraEnv([replicaSetController], ['--controllers=replicaset'], ['--controllers=']);
  const namespaces = env.client.resource<Namespace>(NAMESPACES);
  await namespaces.create({ metadata: { name: NS } });
  const rs: ReplicaSet = {
    metadata: { name: 'web', namespace: NS },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: SPEC },
    },
  };
  await env.client.resource<ReplicaSet>(REPLICA_SETS).create(rs, { namespace: NS });
  await namespaces.delete(NS);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

async function createError(namespace: string): Promise<unknown> {
  return env.client
    .resource<Pod>(PODS)
    .create(pod('p'), { namespace })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
}

describe('a namespace being deleted', () => {
  it('refuses creates with the NamespaceTerminating cause, which the helper recognises', async () => {
    const err = await createError(NS);
    expect(err).toBeDefined();
    expect(namespaceTerminating(err)).toBe(true);
    expect(namespaceGoneOrTerminating(err)).toBe(true);
  });

  it('tells a missing namespace apart: gone, not terminating', async () => {
    const err = await createError('never-made');
    expect(namespaceTerminating(err)).toBe(false);
    expect(namespaceGoneOrTerminating(err)).toBe(true);
  });

  it('the ReplicaSet controller stops creating there without failing its sync', async () => {
    const sets = env.client.resource<ReplicaSet>(REPLICA_SETS);
    await sets.patch('web', { spec: { replicas: 2 } }, { namespace: NS, type: 'merge' });
    // The controller saw the scale-up once it recorded the new generation.
    await until('the scale-up to be observed', async () => {
      const rs = await sets.get('web', { namespace: NS });
      return rs.status?.observedGeneration === rs.metadata.generation ? rs : undefined;
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(env.errors.filter((line) => line.includes('going-away'))).toEqual([]);
    const pods = await env.client.resource<Pod>(PODS).list({ namespace: NS });
    expect(pods.items).toEqual([]);
  });
});
