/**
 * Deletes what a terminating namespace holds, as kube's `NamespacedResourcesDeleter`
 * (`pkg/controller/namespace/deletion`), through the API only:
 *
 * 1. read the namespace; gone or not deleting: done;
 * 2. set `status.phase: Terminating` when it is not yet;
 * 3. no `spec.finalizers` left: done;
 * 4. for every namespaced resource discovery lists with `delete` (custom resources included):
 *    for pods, estimate the grace still due; delete the collection (Background propagation), or
 *    each item when the resource has no `deletecollection`; list what is left and count it by
 *    resource and by finalizer. Items left with finalizers estimate 15 s; items left with no
 *    finalizer and no estimate are an error;
 * 5. write the five conditions (conditions.ts) when they changed;
 * 6. an estimate above zero is returned for the caller to come back later; otherwise the
 *    `kubernetes` finalizer is removed through `namespaces/<name>/finalize`, and the API server
 *    deletes the namespace once no finalizer is left.
 */
import type { Namespace, Pod } from '../../api/types/core-v1.js';
import {
  ApiStatusError,
  NAMESPACES,
  PODS,
  isConflict,
  isNotFound,
  type Client,
  type ResourceRef,
  type TypedObject,
} from '../../client/index.js';
import { rfc3339 } from '../shared/meta.js';
import { failuresOf, updateConditions } from './conditions.js';
import { discoverNamespaced, type NamespacedResource } from './discovery.js';

/** The finalizer this controller owns (kube's `FinalizerKubernetes`). */
export const KUBERNETES_FINALIZER = 'kubernetes';
/** What items held by finalizers are estimated to need (kube's `finalizerEstimateSeconds`). */
export const FINALIZER_ESTIMATE_SECONDS = 15;
/** A pod's grace when its spec names none (kube's `DefaultTerminationGracePeriodSeconds`). */
const DEFAULT_POD_GRACE_SECONDS = 30;

/** What one resource's deletion left. */
interface ResourceOutcome {
  estimate: number;
  remaining: number;
  finalizers: Map<string, number>;
  error?: string;
}

function gvrString(ref: ResourceRef): string {
  return `${ref.group}/${ref.version}, Resource=${ref.resource}`;
}

/** True for the errors after which kube stops trying a verb on a resource (405, and 404). */
function unsupported(err: unknown): boolean {
  return err instanceof ApiStatusError && (err.code === 405 || isNotFound(err));
}

/** Deletes namespaces' content over one client; remembers verbs a resource turned out not to support. */
export class NamespaceDeleter {
  readonly #client: Client;
  readonly #now: () => Date;
  readonly #signal: AbortSignal;
  /** `verb gvr` pairs the server refused with 405/404. */
  readonly #unsupported = new Set<string>();

  constructor(client: Client, signal: AbortSignal, now: () => Date = () => new Date()) {
    this.#client = client;
    this.#signal = signal;
    this.#now = now;
  }

  /**
   * One pass over namespace `name`.
   * @returns seconds to wait before the next pass (0: finished, or nothing to do).
   * @throws Error when content could not be deleted (the caller retries with backoff).
   */
  async delete(name: string): Promise<number> {
    const namespaces = this.#client.resource<Namespace>(NAMESPACES);
    let ns: Namespace;
    try {
      ns = await namespaces.get(name);
    } catch (err) {
      if (isNotFound(err)) return 0;
      throw err;
    }
    if (ns.metadata.deletionTimestamp === undefined) return 0;
    ns = await this.#retryOnConflict(ns, async (cur) => {
      if (cur.status?.phase === 'Terminating') return cur;
      return namespaces.updateStatus({ ...cur, status: { ...cur.status, phase: 'Terminating' } });
    });
    if ((ns.spec?.finalizers ?? []).length === 0) return 0;
    const estimate = await this.#deleteAllContent(ns);
    if (estimate > 0) return estimate;
    await this.#retryOnConflict(ns, async (cur) => {
      const finalizers = [
        ...new Set((cur.spec?.finalizers ?? []).filter((f) => f !== KUBERNETES_FINALIZER)),
      ].sort();
      return namespaces.updateSubresource<Namespace>(cur.metadata.name ?? '', 'finalize', {
        ...cur,
        spec: { ...cur.spec, finalizers },
      });
    });
    return 0;
  }

  /** `fn(ns)`, re-read and repeated on conflicts; NotFound ends it quietly (another did the work). */
  async #retryOnConflict(ns: Namespace, fn: (cur: Namespace) => Promise<Namespace>): Promise<Namespace> {
    let cur = ns;
    for (;;) {
      try {
        return await fn(cur);
      } catch (err) {
        if (isNotFound(err)) return cur;
        if (!isConflict(err)) throw err;
      }
      const fresh = await this.#client.resource<Namespace>(NAMESPACES).get(cur.metadata.name ?? '');
      if (fresh.metadata.uid !== cur.metadata.uid)
        throw new Error('namespace uid has changed across retries');
      cur = fresh;
    }
  }

  async #deleteAllContent(ns: Namespace): Promise<number> {
    const name = ns.metadata.name ?? '';
    const deletedAt = Date.parse(ns.metadata.deletionTimestamp ?? '');
    const discovered = await discoverNamespaced(this.#client, this.#signal);
    let estimate = 0;
    const contentErrors: string[] = [];
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    for (const res of discovered.resources) {
      let outcome: ResourceOutcome;
      try {
        outcome = await this.#deleteResource(res, name, deletedAt);
      } catch (err) {
        contentErrors.push(err instanceof Error ? err.message : String(err));
        continue;
      }
      if (outcome.error !== undefined) contentErrors.push(outcome.error);
      estimate = Math.max(estimate, outcome.estimate);
      if (outcome.remaining > 0) {
        remaining.set(`${res.ref.resource}.${res.ref.group}`, outcome.remaining);
        for (const [f, n] of outcome.finalizers) finalizers.set(f, (finalizers.get(f) ?? 0) + n);
      }
    }
    const failures = failuresOf({
      discoveryFailures: discovered.failed,
      contentErrors,
      remaining,
      finalizers,
    });
    const { conditions, changed } = updateConditions(
      ns.status?.conditions ?? [],
      failures,
      rfc3339(this.#now().getTime()),
    );
    if (changed) {
      try {
        await this.#client
          .resource<Namespace>(NAMESPACES)
          .updateStatus({ ...ns, status: { ...ns.status, conditions } });
      } catch (err) {
        // kube only logs this: the next pass writes them again.
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    }
    if (discovered.failed.size > 0 || contentErrors.length > 0) {
      const all = [
        ...[...discovered.failed].map(([gv, why]) => `discovery of ${gv}: ${why}`),
        ...contentErrors,
      ];
      throw new Error(`deleting the content of namespace ${name}: ${all.join('; ')}`);
    }
    return estimate;
  }

  /** Deletes one resource's objects in `ns` (step 4 of the module comment). */
  async #deleteResource(res: NamespacedResource, ns: string, deletedAt: number): Promise<ResourceOutcome> {
    const { ref } = res;
    const rc = this.#client.resource<TypedObject>(ref);
    const estimate = ref.group === '' && ref.resource === 'pods' ? await this.#podEstimate(ns, deletedAt) : 0;
    const canList = this.#supports(res, 'list');
    let collected = false;
    if (this.#supports(res, 'deletecollection')) {
      try {
        await rc.deleteCollection({ namespace: ns, propagationPolicy: 'Background' });
        collected = true;
      } catch (err) {
        if (!unsupported(err)) throw err;
        this.#unsupported.add(`deletecollection ${gvrString(ref)}`);
      }
    }
    if (!collected && canList) {
      const { items } = await this.#list(res, ns);
      for (const item of items) {
        try {
          await rc.delete(item.metadata?.name ?? '', { namespace: ns, propagationPolicy: 'Background' });
        } catch (err) {
          if (!isNotFound(err) && !(err instanceof ApiStatusError && err.code === 405)) throw err;
        }
      }
    }
    if (!this.#supports(res, 'list')) return { estimate, remaining: 0, finalizers: new Map() };
    const { items, listed } = await this.#list(res, ns);
    if (!listed) return { estimate, remaining: 0, finalizers: new Map() };
    const finalizers = new Map<string, number>();
    for (const item of items) {
      for (const f of item.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    }
    if (items.length === 0 || estimate !== 0) return { estimate, remaining: items.length, finalizers };
    if (finalizers.size > 0)
      return { estimate: FINALIZER_ESTIMATE_SECONDS, remaining: items.length, finalizers };
    return {
      estimate,
      remaining: items.length,
      finalizers,
      error: `unexpected items still remain in namespace: ${ns} for gvr: ${gvrString(ref)}`,
    };
  }

  #supports(res: NamespacedResource, verb: string): boolean {
    return res.verbs.has(verb) && !this.#unsupported.has(`${verb} ${gvrString(res.ref)}`);
  }

  /** The objects of `res` in `ns`; `listed` false when the server turned out not to list it. */
  async #list(res: NamespacedResource, ns: string): Promise<{ items: TypedObject[]; listed: boolean }> {
    try {
      const items: TypedObject[] = [];
      let cont: string | undefined;
      do {
        const page = await this.#client
          .resource<TypedObject>(res.ref)
          .list({ namespace: ns, limit: 500, ...(cont === undefined ? {} : { continue: cont }) });
        items.push(...page.items);
        cont = page.metadata.continue;
      } while (cont !== undefined && cont !== '');
      return { items, listed: true };
    } catch (err) {
      if (!unsupported(err)) throw err;
      this.#unsupported.add(`list ${gvrString(res.ref)}`);
      return { items: [], listed: false };
    }
  }

  /**
   * The longest termination grace of the namespace's non-terminal pods, or 0 once the namespace
   * has been terminating for longer than that (kube's `estimateGracefulTermination`).
   */
  async #podEstimate(ns: string, deletedAt: number): Promise<number> {
    const { items } = await this.#client.resource<Pod>(PODS).list({ namespace: ns });
    let estimate = 0;
    for (const pod of items) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      estimate = Math.max(estimate, pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS);
    }
    if (!Number.isFinite(deletedAt) || this.#now().getTime() - deletedAt >= estimate * 1000) return 0;
    return estimate;
  }
}
