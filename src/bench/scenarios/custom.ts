/**
 * `custom`: custom-object creates against ConfigMap creates. A CRD (`benchobjects.bench.capstan.dev`,
 * namespaced, a structural schema with a validation rule, so a create is validated, defaulted and
 * pruned as a real operator's objects are) is created and waited for (Established); then, for each
 * number of concurrent clients, a closed loop of ConfigMap creates and one of custom object
 * creates with the same payload, both JSON, each for the run's duration. The custom row's ratio
 * is to the ConfigMap row (issue 14's target: at least 80%). The CRD is deleted at the end (its
 * objects with it).
 *
 * A second case times a CRD whose schema is about 100 KB (issue 14: Established within 1 s): from
 * its create to the Established condition, and to the first accepted create of one of its objects.
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
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  payload: { type: 'string' },
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  mode: { type: 'string', enum: ['Auto', 'Manual'], default: 'Auto' },
                },
                'x-kubernetes-validations': [{ rule: 'self.replicas <= 100', message: 'at most 100' }],
              },
            },
          },
        },
      },
    ],
  },
};

/**
 * A CRD of kind `Big` whose schema is about 100 KB: 220 nested objects, each with typed, patterned,
 * enumerated and list-typed members and a validation rule.
 */
function bigSchemaCrd(): { readonly name: string; readonly body: string } {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 220; i++) {
    properties[`field${i}`] = {
      type: 'object',
      description: `Member ${i} of the spec, a nested object with a few typed fields.`,
      properties: {
        name: { type: 'string', maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
        count: { type: 'integer', minimum: 0, maximum: 1000, default: 1 },
        mode: { type: 'string', enum: ['Auto', 'Manual', 'Off'] },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 16, 'x-kubernetes-list-type': 'set' },
      },
      'x-kubernetes-validations': [{ rule: 'self.count <= 500 || self.mode == "Manual"' }],
    };
  }
  const name = `bigs.${GROUP}`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'bigs', singular: 'big', kind: 'Big' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } },
          },
        },
      ],
    },
  };
  return { name, body: JSON.stringify(crd) };
}

/** Creates the 100 KB-schema CRD and times Established and the first create of an object. */
async function bigSchemaCase(ctx: ScenarioContext, ns: string): Promise<Row> {
  const crd = bigSchemaCrd();
  const started = performance.now();
  const created = await ctx.client.request('POST', CRDS, { body: crd.body });
  if (created.status !== 201) throw new Error(`creating ${crd.name}: HTTP ${created.status}`);
  try {
    await waitEstablished(ctx, crd.name);
    const established = performance.now() - started;
    const object = JSON.stringify({
      apiVersion: `${GROUP}/v1`,
      kind: 'Big',
      metadata: { name: 'first' },
      spec: { field1: { name: 'a', count: 3 } },
    });
    for (;;) {
      const res = await ctx.client.request('POST', `/apis/${GROUP}/v1/namespaces/${ns}/bigs`, {
        body: object,
      });
      if (res.status === 201) break;
      if (performance.now() - started > 30_000)
        throw new Error(`${crd.name}: no object accepted within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const served = performance.now() - started;
    ctx.progress(`  ${fmt(crd.body.length / 1024)} KiB schema: Established ${fmt(established)} ms`);
    return {
      scenario: 'custom',
      case: `CRD with a ${Math.round(crd.body.length / 1024)} KiB schema`,
      subject: ctx.subject,
      figures: { 'Established ms': established, 'first create ms': served },
    };
  } finally {
    await ctx.client.request('DELETE', `${CRDS}/${crd.name}`).catch(() => undefined);
  }
}

async function waitEstablished(ctx: ScenarioContext, name = CRD_NAME): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await ctx.client.request('GET', `${CRDS}/${name}`);
    if (res.status === 200) {
      const crd = JSON.parse(res.body.toString('utf8')) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become Established within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs the comparison for every client count. */
export async function customScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const configMaps = jsonConfigMaps(ctx.sizes.objectSize);
  const payload = 'x'.repeat(Math.max(1, ctx.sizes.objectSize));
  const head = `{"apiVersion":"${GROUP}/v1","kind":"BenchObject","metadata":{"name":"`;
  const customBody = (name: string): Buffer =>
    Buffer.from(`${head}${name}"},"spec":{"payload":"${payload}","replicas":3}}`, 'latin1');
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
    rows.push(await bigSchemaCase(ctx, ns));
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
    await ctx.client.request('DELETE', `${CRDS}/${CRD_NAME}`).catch(() => undefined);
  }
}
