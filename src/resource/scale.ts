/**
 * The `scale` subresource (deployments, replicasets, statefulsets, replicationcontrollers): an
 * autoscaling/v1 `Scale` view of the object's `spec.replicas`, `status.replicas` and selector.
 * GET reads it; PUT and PATCH change `spec.replicas` of the object through the update path (a
 * `metadata.resourceVersion` in the Scale is a precondition on the object). Writes are recorded
 * in the object's managedFields with subresource `scale`; an apply of a Scale applies its
 * `spec.replicas` to the object as that manager's `scale` entry.
 */
import { badRequest, invalid } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { invalid as fieldInvalid, NEGATIVE } from '../validation/field-error.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import { applyPatch, type PatchBody } from './patch.js';
import { mustReadObject } from './store-ops.js';
import { applyUpdate } from './update.js';
import { serverWrite, type WriteOptions } from './write-options.js';
import type { JsonMap } from '../apply/value.js';
import type { ScaleMapping } from '../kinds/index.js';

const SCALE_API_VERSION = 'autoscaling/v1';
const SCALE_MESSAGE = 'k8s.io.api.autoscaling.v1.Scale';

function obj(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {};
}

/** Kube's string form of a LabelSelector (`metav1.LabelSelectorAsSelector(s).String()`). */
export function selectorString(selector: unknown, mapStyle: boolean): string {
  const reqs: { key: string; text: string }[] = [];
  const labels = mapStyle ? obj(selector) : obj(obj(selector)['matchLabels']);
  for (const [k, v] of Object.entries(labels)) reqs.push({ key: k, text: `${k}=${String(v)}` });
  if (!mapStyle) {
    const exprs = obj(selector)['matchExpressions'];
    for (const e of Array.isArray(exprs) ? exprs : []) {
      const { key, operator, values } = obj(e);
      if (typeof key !== 'string') continue;
      const vals = (Array.isArray(values) ? values.map(String) : []).sort();
      if (operator === 'In') reqs.push({ key, text: `${key} in (${vals.join(',')})` });
      else if (operator === 'NotIn') reqs.push({ key, text: `${key} notin (${vals.join(',')})` });
      else if (operator === 'Exists') reqs.push({ key, text: key });
      else if (operator === 'DoesNotExist') reqs.push({ key, text: `!${key}` });
    }
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}

/** The Scale of an object (`mapping`: the kind's own replicas paths, custom resources). */
export function toScale(type: ResourceType, source: KubeObject, mapping?: ScaleMapping): JsonObject {
  const spec = obj(source['spec']);
  const status = obj(source['status']);
  const meta = source.metadata;
  const read = mapping?.read(source);
  const selector =
    read !== undefined
      ? (read.selector ?? '')
      : selectorString(spec['selector'], type.group === '' && type.kind === 'ReplicationController');
  const replicas =
    read !== undefined ? read.specReplicas : typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const statusReplicas =
    read !== undefined
      ? read.statusReplicas
      : typeof status['replicas'] === 'number'
        ? status['replicas']
        : 0;
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: {
      name: meta.name,
      ...(meta.namespace === undefined ? {} : { namespace: meta.namespace }),
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: replicas === 0 ? {} : { replicas },
    status: {
      replicas: statusReplicas,
      ...(selector === '' ? {} : { selector }),
    },
  };
}

/** Checks a Scale from a client; returns its replicas and resourceVersion. */
function readScale(value: unknown, name: string): { replicas: number; resourceVersion: string | undefined } {
  if (!isJsonObject(value)) throw badRequest('the body of the request must be a Scale object');
  const { kind, apiVersion } = value;
  if (kind !== undefined && kind !== 'Scale') {
    throw badRequest(
      `${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)} cannot be handled as a Scale`,
    );
  }
  if (apiVersion !== undefined && apiVersion !== SCALE_API_VERSION) {
    throw badRequest(
      `the API version in the data (${JSON.stringify(apiVersion)}) does not match the expected API version (${SCALE_API_VERSION})`,
    );
  }
  const meta = obj(value['metadata']);
  const scaleName = typeof meta['name'] === 'string' ? meta['name'] : '';
  if (scaleName !== name)
    throw badRequest(`the name of the object (${scaleName}) does not match the name on the URL (${name})`);
  const replicas = obj(value['spec'])['replicas'] ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', name, [fieldInvalid('spec.replicas', replicas, NEGATIVE)]);
  }
  const rv = meta['resourceVersion'];
  return { replicas, resourceVersion: typeof rv === 'string' && rv !== '' ? rv : undefined };
}

/** GET `.../scale`. */
export async function getScale(ctx: ResourceContext, target: Target): Promise<ResourceReply> {
  const { obj: current } = await mustReadObject(ctx, target.type, target.namespace, target.name ?? '');
  return {
    code: 200,
    body: JSON.stringify(toScale(target.type, current, ctx.strategies.of(target.type).scale)),
  };
}

/** The object-shaped configuration of an applied Scale: its `spec.replicas` on the object. */
function scaleConfig(type: ResourceType, target: Target, applied: unknown): JsonMap {
  const name = target.name ?? '';
  const scale = readScale(applied, name);
  const spec = obj(obj(applied)['spec']);
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: {
      name,
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
      ...(scale.resourceVersion === undefined ? {} : { resourceVersion: scale.resourceVersion }),
    },
    ...(spec['replicas'] === undefined ? {} : { spec: { replicas: scale.replicas } }),
  };
}

/** PUT (`patch` undefined, `body` a Scale) or PATCH (`patch` set) of `.../scale`. */
export async function writeScale(
  ctx: ResourceContext,
  target: Target,
  body: unknown,
  patch?: PatchBody,
  write: WriteOptions = serverWrite(),
): Promise<ResourceReply> {
  const { type } = target;
  const name = target.name ?? '';
  const mapping = ctx.strategies.of(type).scale;
  // The scale subresource writes the main object's spec.replicas; it never creates.
  const base = {
    type,
    namespace: target.namespace,
    name,
    part: 'main',
    allowCreate: false,
    write,
    subresource: 'scale',
  } as const;
  if (patch?.patchType === 'apply') {
    const config = scaleConfig(type, target, patch.patch);
    const applied = await applyUpdate(ctx, {
      ...base,
      applied: true,
      build: (current) =>
        ctx.fields.apply({ type, subresource: 'scale', live: current, config, write, now: ctx.now() }).object,
    });
    return { code: 200, body: JSON.stringify(toScale(type, applied.obj, mapping)) };
  }
  const updated = await applyUpdate(ctx, {
    ...base,
    build: (current) => {
      if (current === undefined) throw new Error('scale without a current object');
      const requested =
        patch === undefined ? body : applyPatch(ctx, SCALE_MESSAGE, toScale(type, current, mapping), patch);
      const scale = readScale(requested, name);
      if (mapping !== undefined) mapping.setReplicas(current, scale.replicas);
      else current['spec'] = { ...obj(current['spec']), replicas: scale.replicas };
      if (scale.resourceVersion !== undefined) current.metadata.resourceVersion = scale.resourceVersion;
      return current;
    },
  });
  return { code: 200, body: JSON.stringify(toScale(type, updated.obj, mapping)) };
}
