/**
 * The `pods/eviction` subresource (POST an `policy/v1` Eviction), as kube-apiserver's
 * EvictionREST: a pod that is terminal, Pending or already deleting is deleted without asking
 * its PodDisruptionBudget; otherwise the one budget selecting it must allow a disruption, which
 * the eviction takes (disruptionsAllowed − 1, the pod noted in `status.disruptedPods`) before
 * the pod is deleted. A budget not yet processed by the disruption controller, or one allowing
 * no disruption, is a 429 with a `DisruptionBudget` cause; two budgets are a 500. A pod that is
 * not ready while its budget is healthy (`IfHealthyBudget`, the default) or with
 * `unhealthyPodEvictionPolicy: AlwaysAllow` is deleted without taking a disruption.
 *
 * Before the delete, the pod gets the condition `DisruptionTarget` (True, reason
 * `EvictionByEvictionAPI`), as kube's `addConditionAndDeletePod` writes it: straight to storage
 * (no managedFields entry), its transition time kept when it already showed True, no write when
 * it already showed exactly this; a resourceVersion precondition of the delete then names the
 * version written. A dry run writes neither.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { transitionTime } from '../api/conditions.js';
import { ApiError, badRequest, conflict, internalError, notFound } from '../api/errors.js';
import {
  decodeStored,
  encodeForStorage,
  isJsonObject,
  rfc3339Seconds,
  type JsonObject,
  type KubeObject,
} from '../api/object.js';
import type { CustomEndpoint, EndpointCall } from '../http/resource-routes.js';
import { qualified, type ResourceContext, type ResourceReply } from '../resource/context.js';
import { deleteObject, parseDeleteOptions, type DeleteOptions } from '../resource/delete.js';
import { collectionSpan, objectKey } from '../resource/keys.js';
import { racedWith, type WriteOutcome } from '../resource/object-store.js';
import { updateOptions } from '../resource/store-ops.js';
import type { ResourceType } from '../registry/types.js';
import { selectorMatches } from '../validation/meta.js';

/** Kube's `MaxDisruptedPodSize`: more unconfirmed evictions than this are refused. */
const MAX_DISRUPTED_PODS = 2000;
/** Attempts at the budget's status write before giving up with a 409. */
const MAX_ATTEMPTS = 5;
const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

interface Budget extends KubeObject {
  spec?: { selector?: unknown; unhealthyPodEvictionPolicy?: string };
  status?: {
    observedGeneration?: number;
    disruptionsAllowed?: number;
    currentHealthy?: number;
    desiredHealthy?: number;
    disruptedPods?: Record<string, string>;
    conditions?: {
      type?: string;
      status?: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
      observedGeneration?: number;
    }[];
  };
}

interface PodLike extends KubeObject {
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
}

function tooManyRequests(cause: string): ApiError {
  return new ApiError('TooManyRequests', TOO_MANY, {
    causes: [{ reason: 'DisruptionBudget', message: cause }],
  });
}

function isReady(pod: PodLike): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function selectsPod(budget: Budget, pod: PodLike): boolean {
  const sel = budget.spec?.selector;
  // As kube's eviction: an empty (or absent) selector selects nothing here.
  if (!isJsonObject(sel)) return false;
  const ml = sel['matchLabels'];
  const me = sel['matchExpressions'];
  const empty =
    (!isJsonObject(ml) || Object.keys(ml).length === 0) && (!Array.isArray(me) || me.length === 0);
  if (empty) return false;
  return selectorMatches(sel, new Map(Object.entries(pod.metadata.labels ?? {})));
}

/** The pods/eviction endpoint (key `/pods/eviction`). */
export function evictionEndpoint(): CustomEndpoint {
  return {
    methods: ['POST'],
    messageType: 'k8s.io.api.policy.v1.Eviction',
    handle: evict,
  };
}

async function evict(call: EndpointCall): Promise<ResourceReply> {
  const { ctx, target, request } = call;
  const namespace = target.namespace ?? '';
  const name = target.name ?? '';
  if (!isJsonObject(call.body)) throw badRequest('the request body must be an Eviction object');
  const meta = isJsonObject(call.body['metadata']) ? call.body['metadata'] : {};
  if (typeof meta['name'] === 'string' && meta['name'] !== '' && meta['name'] !== name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  const query = (request.query ?? {}) as Record<string, string>;
  const options = {
    ...parseDeleteOptions(call.body['deleteOptions'] ?? undefined, {}),
    ...(query['dryRun'] === 'All' ? { dryRun: true } : {}),
    requester: { user: request.user, warnings: [], auditAnnotations: {} },
  };
  const podKey = objectKey(target.type, namespace, name);
  const { kv } = await ctx.store.get(podKey);
  if (kv === undefined) throw notFound({ resource: 'pods', group: '', name });
  const pod = decodeStored(kv.value, kv.modRevision) as PodLike;
  const phase = pod.status?.phase;
  const ignoreBudget =
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    Boolean(pod.metadata.deletionTimestamp);
  if (!ignoreBudget) await takeDisruption(call, pod, options.dryRun === true);
  const deletion =
    options.dryRun === true ? options : await markDisruptionTarget(ctx, target.type, podKey, name, options);
  await deleteObject(ctx, target.type, namespace, name, deletion);
  return {
    code: 201,
    body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }),
  };
}

/** The condition an eviction gives the pod before deleting it (kube's, with its words). */
const DISRUPTION_TARGET = {
  type: 'DisruptionTarget',
  status: 'True',
  reason: 'EvictionByEvictionAPI',
  message: 'Eviction API: evicting',
} as const;

/**
 * Gives the pod `name` (at `key`) the condition {@link DISRUPTION_TARGET} (see the module comment), and
 * answers the delete options to evict it with: a resourceVersion precondition moved to the
 * version written.
 * @throws ApiError 404 when the pod is gone
 */
async function markDisruptionTarget(
  ctx: ResourceContext,
  type: ResourceType,
  key: string,
  name: string,
  options: DeleteOptions,
): Promise<DeleteOptions> {
  const written = await ctx.objects.guaranteedUpdate<string | undefined>(
    type,
    key,
    { dryRun: false },
    async (stored, attempt): Promise<WriteOutcome<string | undefined>> => {
      if (stored === undefined) throw notFound(qualified(type, name));
      const { kv, obj: pod } = stored;
      // kube checks the delete's preconditions against the latest pod here, in its own words.
      const pre = options.preconditions;
      const target = { resource: 'Pod', group: '', name };
      if (pre?.uid !== undefined && pre.uid !== '' && pre.uid !== pod.metadata.uid) {
        const why = `the UID in the precondition (${pre.uid}) does not match the UID in record (${pod.metadata.uid ?? ''}). The object might have been deleted and then recreated`;
        return { rejected: conflict(target, why) };
      }
      const rv = pre?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== pod.metadata.resourceVersion) {
        const why = `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion ?? ''}). The object might have been modified`;
        return { rejected: conflict(target, why) };
      }
      const status: JsonObject = isJsonObject(pod['status']) ? pod['status'] : {};
      const conditions = Array.isArray(status['conditions']) ? status['conditions'] : [];
      const at = conditions.findIndex((c) => isJsonObject(c) && c['type'] === DISRUPTION_TARGET.type);
      const old = at < 0 ? undefined : (conditions[at] as JsonObject);
      const next: JsonObject = {
        ...DISRUPTION_TARGET,
        lastTransitionTime: transitionTime(old, DISRUPTION_TARGET.status, rfc3339Seconds(ctx.now())),
      };
      const same =
        old !== undefined &&
        old['status'] === next['status'] &&
        old['lastTransitionTime'] === next['lastTransitionTime'] &&
        old['reason'] === next['reason'] &&
        old['message'] === next['message'] &&
        (old['lastProbeTime'] === undefined || old['lastProbeTime'] === null);
      if (same) return { unchanged: () => undefined };
      if (at < 0) conditions.push(next);
      else conditions[at] = next;
      status['conditions'] = conditions;
      pod['status'] = status;
      delete pod.metadata.resourceVersion;
      try {
        const done = await ctx.store.update(key, ctx.encode(pod), await updateOptions(ctx, type, kv));
        return { done: String(done.revision) };
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError) || attempt >= MAX_ATTEMPTS)
          throw err;
        return racedWith(err);
      }
    },
  );
  const rv = options.preconditions?.resourceVersion;
  if (written === undefined || rv === undefined || rv === '') return options;
  return { ...options, preconditions: { ...options.preconditions, resourceVersion: written } };
}

/** Checks the pod's budget and takes one disruption from it. @throws ApiError 429, 500, 403 */
async function takeDisruption(call: EndpointCall, pod: PodLike, dryRun: boolean): Promise<void> {
  const { ctx } = call;
  const type = ctx.registry.byResource('policy', 'v1', 'poddisruptionbudgets');
  if (type === undefined) return;
  const namespace = pod.metadata.namespace ?? '';
  for (let attempt = 1; ; attempt++) {
    const { items } = await ctx.store.range(collectionSpan(type, namespace));
    const budgets = items
      .map((kv) => {
        const budget: Budget = decodeStored(kv.value, kv.modRevision);
        return { kv, budget };
      })
      .filter((b) => selectsPod(b.budget, pod));
    if (budgets.length === 0) return;
    if (budgets.length > 1) {
      throw internalError(
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      );
    }
    const [first] = budgets;
    if (first === undefined) return;
    const { kv, budget } = first;
    const status = budget.status ?? {};
    if (!isReady(pod)) {
      if (budget.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return;
      const desired = status.desiredHealthy ?? 0;
      if ((status.currentHealthy ?? 0) >= desired && desired > 0) return;
    }
    const pdbName = budget.metadata.name ?? '';
    if ((status.observedGeneration ?? 0) < (budget.metadata.generation ?? 0)) {
      throw tooManyRequests(`The disruption budget ${pdbName} is still being processed by the server.`);
    }
    const allowed = status.disruptionsAllowed ?? 0;
    if (allowed < 0) {
      throw new ApiError(
        'Forbidden',
        `poddisruptionbudgets.policy "${pdbName}" is forbidden: pdb disruptions allowed is negative`,
        { name: pdbName, group: 'policy', kind: 'poddisruptionbudgets' },
      );
    }
    if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
      throw new ApiError(
        'Forbidden',
        `poddisruptionbudgets.policy "${pdbName}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
        { name: pdbName, group: 'policy', kind: 'poddisruptionbudgets' },
      );
    }
    if (allowed === 0) {
      throw tooManyRequests(
        `The disruption budget ${pdbName} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`,
      );
    }
    if (dryRun) return;
    const now = ctx.now();
    const next: Budget = structuredClone(budget);
    const nextStatus = (next.status ??= {});
    nextStatus.disruptionsAllowed = allowed - 1;
    if (nextStatus.disruptionsAllowed === 0) {
      const cond = (nextStatus.conditions ??= []).find((c) => c.type === 'DisruptionAllowed');
      const changed = cond?.status !== 'False';
      const updated = {
        type: 'DisruptionAllowed',
        status: 'False',
        reason: 'InsufficientPods',
        message: '',
        observedGeneration: nextStatus.observedGeneration ?? 0,
        lastTransitionTime:
          changed || cond?.lastTransitionTime === undefined
            ? now.toISOString().replace(/\.\d{3}Z$/, 'Z')
            : cond.lastTransitionTime,
      };
      nextStatus.conditions = [
        ...nextStatus.conditions.filter((c) => c.type !== 'DisruptionAllowed'),
        updated,
      ];
    }
    nextStatus.disruptedPods = {
      ...(nextStatus.disruptedPods ?? {}),
      [pod.metadata.name ?? '']: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    delete next.metadata.resourceVersion;
    try {
      await ctx.store.update(objectKey(type, namespace, pdbName), encodeForStorage(next), {
        ifModRevision: kv.modRevision,
      });
      return;
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}
