/**
 * A continue token whose revision was compacted away gets kube-apiserver's 410 `Expired` with a
 * token in the Status's `metadata.continue` (JSON and protobuf) that lists the rest of the
 * collection, after the same key, at the latest revision: the conformance spec "API chunking ...
 * compacted away, though the list is inconsistent" finishes its list with it.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/codec/index.js';
import { protocDecode } from '../codec/support.js';
import { adminFetchBytes, type BytesResult } from '../support/https.js';
import { adminTls, clientFailure, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let core: k8s.CoreV1Api;
const NS = 'chunking';
const INCONSISTENT =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

beforeAll(async () => {
  server = await startTestServer({ store: 'leveldb' });
  core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  for (let i = 0; i < 12; i++) {
    const name = `template-${String(i).padStart(2, '0')}`;
    await core.createNamespacedPodTemplate({
      namespace: NS,
      body: { metadata: { name }, template: { spec: { containers: [{ name: 'c', image: 'pause' }] } } },
    });
  }
});
afterAll(async () => {
  await server.close();
});

/** A GET with the admin certificate; the body comes back as bytes. */
function rawGet(path: string, accept: string): Promise<BytesResult> {
  return adminFetchBytes(`${server.url}${path}`, adminTls(server.kubeconfigPath), {
    headers: { Accept: accept },
  });
}

/** Compacts past everything written so far: the first tick records a revision, the second compacts to it. */
async function compactAll(): Promise<void> {
  await server.server.compactNow();
  await server.server.compactNow();
}

describe('continue token of a compacted revision', () => {
  it('gets 410 with a token that lists the rest at the latest revision (client-node, protobuf)', async () => {
    const first = await core.listNamespacedPodTemplate({ namespace: NS, limit: 5 });
    const firstRv = first.metadata?.resourceVersion;
    const token = first.metadata?._continue ?? '';
    expect(first.items.map((t) => t.metadata?.name)).toEqual([
      'template-00',
      'template-01',
      'template-02',
      'template-03',
      'template-04',
    ]);
    expect(token).toBeTruthy();

    // Changes after the first page: one later object gone, one new at the end.
    await core.deleteNamespacedPodTemplate({ name: 'template-07', namespace: NS });
    await core.createNamespacedPodTemplate({
      namespace: NS,
      body: {
        metadata: { name: 'template-99' },
        template: { spec: { containers: [{ name: 'c', image: 'pause' }] } },
      },
    });
    await compactAll();

    const failure = await clientFailure<{
      reason: string;
      message: string;
      metadata?: { continue?: string };
    }>(core.listNamespacedPodTemplate({ namespace: NS, limit: 5, _continue: token }));
    expect(failure.code).toBe(410);
    expect(failure.body.reason).toBe('Expired');
    expect(failure.body.message).toBe(INCONSISTENT);
    const inconsistent = failure.body.metadata?.continue ?? '';
    expect(inconsistent).not.toBe('');

    // The same 410 in protobuf (the e2e suite's client) carries the token too.
    const pb = await rawGet(
      `/api/v1/namespaces/${NS}/podtemplates?limit=5&continue=${encodeURIComponent(token)}`,
      'application/vnd.kubernetes.protobuf',
    );
    expect(pb.status).toBe(410);
    const status = protocDecode('k8s.io.apimachinery.pkg.apis.meta.v1.Status', decodeEnvelope(pb.body).raw);
    expect(status).toContain(`continue: "${inconsistent}"`);
    expect(status).toContain('reason: "Expired"');

    // The handed-back token lists the rest after template-04 as it is now.
    const names: string[] = [];
    let next: string | undefined = inconsistent;
    let pages = 0;
    while (next !== undefined && next !== '') {
      const page = await core.listNamespacedPodTemplate({ namespace: NS, limit: 5, _continue: next });
      if (pages === 0) expect(page.metadata?.resourceVersion).not.toBe(firstRv);
      names.push(...page.items.map((t) => t.metadata?.name ?? ''));
      next = page.metadata?._continue;
      pages++;
    }
    expect(names).toEqual([
      'template-05',
      'template-06',
      'template-08',
      'template-09',
      'template-10',
      'template-11',
      'template-99',
    ]);
    expect(pages).toBe(2);
  });

  it('keeps a handed-back token usable after later compactions (it names no revision)', async () => {
    const first = await core.listNamespacedPodTemplate({ namespace: NS, limit: 3 });
    await compactAll();
    const failure = await clientFailure<{ metadata?: { continue?: string } }>(
      core.listNamespacedPodTemplate({ namespace: NS, limit: 3, _continue: first.metadata?._continue ?? '' }),
    );
    expect(failure.code).toBe(410);
    const inconsistent = failure.body.metadata?.continue ?? '';
    await core.createNamespacedPodTemplate({
      namespace: NS,
      body: {
        metadata: { name: 'template-98' },
        template: { spec: { containers: [{ name: 'c', image: 'pause' }] } },
      },
    });
    await compactAll();
    const page = await core.listNamespacedPodTemplate({ namespace: NS, limit: 3, _continue: inconsistent });
    expect(page.items.map((t) => t.metadata?.name)).toEqual(['template-03', 'template-04', 'template-05']);
  });

  it('rejects a garbled token with 400, as before', async () => {
    const failure = await clientFailure(
      core.listNamespacedPodTemplate({ namespace: NS, limit: 3, _continue: 'AAAA' }),
    );
    expect(failure.code).toBe(400);
  });
});
