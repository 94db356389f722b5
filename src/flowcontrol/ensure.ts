/**
 * Maintenance of the bootstrap configuration objects, kube's rules:
 * - a mandatory object (`exempt`, `catch-all`) always exists with kube's spec: a deleted one is
 *   recreated and a changed spec is put back, whatever its `apf.kubernetes.io/autoupdate-spec`;
 * - a suggested object exists too (deleting it is not respected: it comes back), but its spec is
 *   kept only while the annotation is `true`. An annotation that is absent or not a boolean is
 *   decided once: `true` when the object was never changed (generation 1), else `false`;
 * - an object that is not a bootstrap object but carries the annotation `true` is deleted.
 * Every write is skipped when the object already is as it should be, so running the maintenance
 * again on each change of the objects converges and never loops.
 */
import { ApiError } from '../api/errors.js';
import { cloneJson, jsonEqual, type KubeObject } from '../api/object.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { deleteObject } from '../resource/delete.js';
import { applyUpdate } from '../resource/update.js';
import { serverWrite } from '../resource/write-options.js';
import type { ResourceType } from '../registry/types.js';
import {
  AUTO_UPDATE_ANNOTATION,
  FLOWCONTROL_API_VERSION,
  isMandatory,
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
  type BootstrapObject,
} from '../api/flowcontrol-bootstrap.js';

/** kube's field manager for the maintenance writes. */
export const PRODUCER_MANAGER = 'api-priority-and-fairness-config-producer-v1';

const write = () => ({ ...serverWrite(), manager: PRODUCER_MANAGER });

/** The two served types. */
export interface FlowControlTypes {
  readonly flowSchemas: ResourceType;
  readonly priorityLevels: ResourceType;
}

/** The flowcontrol types of `ctx`'s registry. */
export function flowControlTypes(ctx: ResourceContext): FlowControlTypes {
  const g = 'flowcontrol.apiserver.k8s.io';
  const flowSchemas = ctx.registry.byResource(g, 'v1', 'flowschemas');
  const priorityLevels = ctx.registry.byResource(g, 'v1', 'prioritylevelconfigurations');
  if (flowSchemas === undefined || priorityLevels === undefined)
    throw new Error('the registry serves no flowcontrol.apiserver.k8s.io/v1');
  return { flowSchemas, priorityLevels };
}

/** Whether the server keeps `current`'s spec, and the annotation value that says so. */
function autoUpdates(b: BootstrapObject, current: KubeObject): boolean {
  if (isMandatory(b.kind, b.name)) return true;
  const value = current.metadata.annotations?.[AUTO_UPDATE_ANNOTATION];
  if (value === 'true') return true;
  if (value === 'false') return false;
  return current.metadata.generation === 1;
}

function fresh(b: BootstrapObject): KubeObject {
  return {
    apiVersion: FLOWCONTROL_API_VERSION,
    kind: b.kind,
    metadata: { name: b.name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: cloneJson(b.spec),
  };
}

async function ensureOne(
  ctx: ResourceContext,
  type: ResourceType,
  b: BootstrapObject,
  current: KubeObject | undefined,
): Promise<void> {
  if (current === undefined) {
    try {
      await createObject(ctx, type, fresh(b), { write: write() });
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
    }
    return;
  }
  const auto = autoUpdates(b, current);
  const annotation = auto ? 'true' : 'false';
  const specOk = !auto || jsonEqual(current['spec'], b.spec);
  if (specOk && current.metadata.annotations?.[AUTO_UPDATE_ANNOTATION] === annotation) return;
  await applyUpdate(ctx, {
    type,
    namespace: undefined,
    name: b.name,
    part: 'main',
    allowCreate: false,
    write: write(),
    build: (obj) => {
      const next = obj as KubeObject;
      next.metadata.annotations = {
        ...(next.metadata.annotations ?? {}),
        [AUTO_UPDATE_ANNOTATION]: annotation,
      };
      if (auto) next['spec'] = cloneJson(b.spec);
      return next;
    },
  });
}

/**
 * Runs the maintenance over the objects as they are now (`current`: name → object of each
 * type, as the caller last saw them). Errors are thrown after every object was tried.
 */
export async function ensureBootstrap(
  ctx: ResourceContext,
  types: FlowControlTypes,
  current: {
    readonly flowSchemas: ReadonlyMap<string, KubeObject>;
    readonly priorityLevels: ReadonlyMap<string, KubeObject>;
  },
): Promise<void> {
  const errors: unknown[] = [];
  const attempt = async (p: Promise<void>): Promise<void> => {
    try {
      await p;
    } catch (err) {
      if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound')))
        errors.push(err);
    }
  };
  const plan: [ResourceType, readonly BootstrapObject[], ReadonlyMap<string, KubeObject>][] = [
    [
      types.priorityLevels,
      [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS],
      current.priorityLevels,
    ],
    [types.flowSchemas, [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS], current.flowSchemas],
  ];
  for (const [type, wanted, have] of plan) {
    const names = new Set(wanted.map((b) => b.name));
    // Together: the store commits them in one batch instead of one synced write each.
    await Promise.all(wanted.map((b) => attempt(ensureOne(ctx, type, b, have.get(b.name)))));
    for (const [name, obj] of have) {
      if (names.has(name) || obj.metadata.annotations?.[AUTO_UPDATE_ANNOTATION] !== 'true') continue;
      if (obj.metadata.deletionTimestamp) continue;
      await attempt(deleteObject(ctx, type, undefined, name, {}).then(() => undefined));
    }
  }
  if (errors.length > 0) throw errors[0];
}
