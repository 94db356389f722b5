/**
 * `POST pods/{name}/binding` (kube's BindingREST): assigns a pending pod to a node. The stored pod
 * gets `spec.nodeName`, the Binding's annotations, and `PodScheduled=True`; the write goes straight
 * to storage with a compare on the mod revision, as kube's assignPod does, since pod updates may
 * not change `spec.nodeName`. Errors as kube: 409 when the pod is already assigned or a UID /
 * resourceVersion precondition fails, 409 while it is being deleted, 400 for a target that is
 * not a Node.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { badRequest, conflict, notFound } from '../api/errors.js';
import { isJsonObject, type JsonObject } from '../api/object.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { objectKey } from './keys.js';
import { racedWith, type WriteOutcome } from './object-store.js';
import { updateOptions } from './store-ops.js';

const MAX_ATTEMPTS = 16;

function obj(v: unknown): JsonObject {
  return isJsonObject(v) ? v : {};
}

/** Binds the pod named by `target` as the Binding `body` says. */
export async function bindPod(
  ctx: ResourceContext,
  target: Target,
  body: unknown,
  dryRun: boolean,
): Promise<ResourceReply> {
  const { type, namespace } = target;
  const name = target.name ?? '';
  const binding = obj(body);
  const meta = obj(binding['metadata']);
  const bindingName = typeof meta['name'] === 'string' ? meta['name'] : name;
  if (bindingName !== name) throw badRequest('name in URL does not match name in Binding object');
  const tgt = obj(binding['target']);
  const kind = typeof tgt['kind'] === 'string' ? tgt['kind'] : '';
  if (kind !== '' && kind !== 'Node') throw badRequest('must be empty or "Node"');
  const nodeName = typeof tgt['name'] === 'string' ? tgt['name'] : '';
  const annotations = obj(meta['annotations']);
  const uid = typeof meta['uid'] === 'string' && meta['uid'] !== '' ? meta['uid'] : undefined;
  const rv =
    typeof meta['resourceVersion'] === 'string' && meta['resourceVersion'] !== ''
      ? meta['resourceVersion']
      : undefined;
  const podName = `${namespace ?? ''}/${name}`;
  const key = objectKey(type, namespace, name);
  return ctx.objects.guaranteedUpdate<ResourceReply>(
    type,
    key,
    { dryRun },
    async (stored, attempt): Promise<WriteOutcome<ResourceReply>> => {
      if (stored === undefined) throw notFound(qualified(type, name));
      // The copy is this attempt's own (ObjectStore's contract): it is changed in place.
      const { kv, obj: pod } = stored;
      if (uid !== undefined && pod.metadata.uid !== uid) {
        return {
          rejected: conflict(
            qualified(type, name),
            `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid ?? ''}`,
          ),
        };
      }
      if (rv !== undefined && pod.metadata.resourceVersion !== rv) {
        return {
          rejected: conflict(
            qualified(type, name),
            `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${String(pod.metadata.resourceVersion)}`,
          ),
        };
      }
      if (pod.metadata.deletionTimestamp) {
        return {
          rejected: conflict(
            qualified(type, name),
            `pod ${podName} is being deleted, cannot be assigned to a host`,
          ),
        };
      }
      const spec = obj(pod['spec']);
      const assigned = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '';
      if (assigned !== '') {
        return {
          rejected: conflict(
            qualified(type, name),
            `pod ${podName} is already assigned to node "${assigned}"`,
          ),
        };
      }
      spec['nodeName'] = nodeName;
      pod['spec'] = spec;
      if (Object.keys(annotations).length > 0) {
        pod.metadata.annotations = {
          ...(pod.metadata.annotations ?? {}),
          ...(annotations as Record<string, string>),
        };
      }
      const status = obj(pod['status']);
      const conditions = (Array.isArray(status['conditions']) ? status['conditions'] : []).filter(
        (c) => obj(c)['type'] !== 'PodScheduled',
      );
      conditions.push({
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: ctx
          .now()
          .toISOString()
          .replace(/\.\d{3}Z$/, 'Z'),
      });
      status['conditions'] = conditions;
      pod['status'] = status;
      delete pod.metadata.resourceVersion;
      const created = {
        code: 201,
        body: JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          code: 201,
        }),
      };
      if (dryRun) return { done: created };
      try {
        await ctx.store.update(key, ctx.encode(pod), await updateOptions(ctx, type, kv));
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError) || attempt >= MAX_ATTEMPTS)
          throw err;
        return racedWith(err);
      }
      return { done: created };
    },
  );
}
