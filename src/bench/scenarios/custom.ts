/**
 * `custom`: custom-object creates against ConfigMap creates. A CRD (`benchobjects.bench.capstan.dev`,
 * namespaced, schema preserving unknown fields) is created and waited for (Established); then,
 * for each number of concurrent clients, a closed loop of ConfigMap creates and one of custom
 * object creates with the same payload, both JSON, each for the run's duration. The custom row's
 * ratio is to the ConfigMap row (issue 14's target: at least 80%). The CRD is deleted at the end
 * (its objects with it).
 */
import { createNamespace, deleteNamespace, type ScenarioContext } from '../context.js';
import { closedLoop } from '../load.js';
import { jsonConfigMaps, JSON_TYPE } from '../objects.js';
import type { Row } from '../report.js';
import { fmt } from '../stats.js';
import { loopFigures } from './crud.js';

const GROUP = 'bench.capstan.dev';
const CRD_NAME = `benchobjects.${GROUP}`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'benchobjects', singular: 'benchobject', kind: 'BenchObject' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

async function waitEstablished(ctx: ScenarioContext): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await ctx.client.request('GET', `${CRDS}/${CRD_NAME}`);
    if (res.status === 200) {
      const crd = JSON.parse(res.body.toString('utf8')) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    }
    if (Date.now() > deadline) throw new Error(`${CRD_NAME} did not become Established within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs the comparison for every client count. */
export async function customScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const configMaps = jsonConfigMaps(ctx.sizes.objectSize);
  const payload = 'x'.repeat(Math.max(1, ctx.sizes.objectSize));
  const head = `{"apiVersion":"${GROUP}/v1","kind":"BenchObject","metadata":{"name":"`;
  const customBody = (name: string): Buffer =>
    Buffer.from(`${head}${name}"},"spec":{"payload":"${payload}"}}`, 'latin1');
  const created = await ctx.client.request('POST', CRDS, { body: JSON.stringify(CRD) });
  if (created.status !== 201 && created.status !== 409) {
    throw new Error(`creating ${CRD_NAME}: HTTP ${created.status}`);
  }
  await waitEstablished(ctx);
  const ns = await createNamespace(ctx.client, 'custom');
  const send = { contentType: JSON_TYPE, accept: JSON_TYPE, discardBody: true } as const;
  try {
    for (const clients of ctx.sizes.clients) {
      const c = `${clients} clients, JSON`;
      const budget = { durationMs: ctx.sizes.durationMs };
      ctx.progress(`custom objects against ConfigMaps, ${clients} clients`);
      const cms = await closedLoop(clients, budget, (n) =>
        ctx.client.expect('POST', `/api/v1/namespaces/${ns}/configmaps`, 201, {
          ...send,
          body: configMaps.body(`cm${clients}-${n}`),
        }),
      );
      const crs = await closedLoop(clients, budget, (n) =>
        ctx.client.expect('POST', `/apis/${GROUP}/v1/namespaces/${ns}/benchobjects`, 201, {
          ...send,
          body: customBody(`cr${clients}-${n}`),
        }),
      );
      ctx.progress(`  ConfigMap ${fmt(cms.opsPerSec)}/s, custom object ${fmt(crs.opsPerSec)}/s`);
      rows.push(
        {
          scenario: 'custom',
          case: c,
          subject: `${ctx.subject} ConfigMap create`,
          figures: loopFigures(cms),
        },
        {
          scenario: 'custom',
          case: c,
          subject: `${ctx.subject} custom object create`,
          figures: loopFigures(crs),
          ratios: [{ to: 'ConfigMap create', value: crs.opsPerSec / cms.opsPerSec }],
        },
      );
    }
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
    await ctx.client.request('DELETE', `${CRDS}/${CRD_NAME}`).catch(() => undefined);
  }
}
