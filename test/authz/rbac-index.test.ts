/**
 * The RBAC index's four watches run apart, so a binding can be indexed before the ClusterRole it
 * names (the "clusterrole not found" false denial the authorization matrix once met under CPU
 * load). Here the ClusterRole watch is held back on purpose: without catching up, RBAC denies a
 * request made after both writes returned; with it (the default), the denial waits for the index
 * to reach the store's revision and the request is allowed. Revocations are not waited for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../storage/interface.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Attributes } from '../../src/authz/attributes.js';
import { RbacAuthorizer } from '../../src/authz/rbac-authorizer.js';
import { RbacIndex } from '../../src/authz/rbac-index.js';
import { Gate, heldWatch, overriding } from '../support/store-wrappers.js';

const json = (o: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(o));

const alice: Attributes = {
  user: { name: 'alice', uid: '', groups: ['system:authenticated'], extra: {} },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/default/pods/p',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'p',
};

let store: Store | undefined;
let index: RbacIndex | undefined;
afterEach(async () => {
  index?.close();
  await store?.close();
});

/** A store whose watches of `/clusterroles/` deliver nothing while `gate` is shut. */
async function setup(): Promise<{ gated: Store; gate: Gate; index: RbacIndex }> {
  const inner = await openMemoryStore();
  const gate = new Gate();
  const gated = overriding(inner, {
    watch: (span, options) => {
      const w = inner.watch(span, options);
      return 'prefix' in span && span.prefix === '/clusterroles/' ? heldWatch(w, gate) : w;
    },
  });
  store = inner;
  index = new RbacIndex(gated);
  index.start();
  expect(await index.waitSynced(5_000)).toBe(true);
  return { gated, gate, index };
}

/** Writes a ClusterRole granting pods get and a binding of it to alice; returns when both are stored. */
async function grant(gated: Store): Promise<void> {
  await gated.create(
    '/clusterroles/pod-reader',
    json({
      metadata: { name: 'pod-reader' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    }),
  );
  await gated.create(
    '/clusterrolebindings/alice',
    json({
      metadata: { name: 'alice' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pod-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    }),
  );
}

async function bindingIndexed(i: RbacIndex): Promise<void> {
  for (let n = 0; n < 200 && i.binding('', 'alice') === undefined; n++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(i.binding('', 'alice')).toBeDefined();
  expect(i.clusterRole('pod-reader')).toBeUndefined();
}

describe('RBAC index freshness', () => {
  it('without catching up, a binding indexed before its ClusterRole denies (the race)', async () => {
    const { gated, gate, index: i } = await setup();
    gate.shut();
    await grant(gated);
    await bindingIndexed(i);
    const answer = await new RbacAuthorizer(i, { catchUpMs: 0 }).authorize(alice);
    expect(answer).toMatchObject({
      decision: 'noOpinion',
      evaluationError: 'clusterrole.rbac.authorization.k8s.io "pod-reader" not found',
    });
    gate.open();
  });

  it('a request after both writes returned waits for the index and is allowed', async () => {
    const { gated, gate, index: i } = await setup();
    gate.shut();
    await grant(gated);
    await bindingIndexed(i);
    const rbac = new RbacAuthorizer(i);
    const pending = rbac.authorize(alice);
    expect(pending).toBeInstanceOf(Promise);
    setTimeout(() => gate.open(), 50);
    expect(await pending).toMatchObject({ decision: 'allow' });
    // Caught up: allowed at once, synchronously.
    expect(rbac.authorize(alice)).toMatchObject({ decision: 'allow' });
  });

  it('a denial stands after the wait bound when the index cannot catch up', async () => {
    const { gated, gate, index: i } = await setup();
    gate.shut();
    await grant(gated);
    await bindingIndexed(i);
    const started = Date.now();
    const answer = await new RbacAuthorizer(i, { catchUpMs: 100 }).authorize(alice);
    expect(answer.decision).toBe('noOpinion');
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    gate.open();
  });
});
