/**
 * The `pods/eviction` subresource (POST an `policy/v1` Eviction), as kube-apiserver's
 * EvictionREST: a pod that is terminal, Pending or already deleting is deleted without asking
 * its PodDisruptionBudget; otherwise the one budget selecting it must allow a disruption, which
 * the eviction takes (disruptionsAllowed − 1, the pod noted in `status.disruptedPods`) before
 * the pod is deleted. A budget not yet processed by the disruption controller, or one allowing
 * no disruption, is a 429 with a `DisruptionBudget` cause; two budgets are a 500. A pod that is
 * not ready while its budget is healthy (`IfHealthyBudget`, the default) or with
 * `unhealthyPodEvictionPolicy: AlwaysAllow` is deleted without taking a disruption.
 */
import { ConflictError } from '../../storage/errors.js';
import { ApiError, badRequest, internalError, notFound } from '../api/errors.js';
import { decodeStored, encodeForStorage, isJsonObject, type KubeObject } from '../api/object.js';
import type { CustomEndpoint, EndpointCall } from '../http/resource-routes.js';
import type { ResourceReply } from '../resource/context.js';
import { deleteObject, parseDeleteOptions } from '../resource/delete.js';
import { collectionSpan, objectKey } from '../resource/keys.js';
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
  await deleteObject(ctx, target.type, namespace, name, options);
  return {
    code: 201,
    body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }),
  };
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
