/**
 * The five conditions the namespace controller keeps on a terminating namespace (kube's
 * `pkg/controller/namespace/deletion/status_condition_utils.go`): each pass sets every one, True
 * with the failure's reason and message, or False with kube's "ok" reason and message. A
 * condition's `lastTransitionTime` moves only when its status changes.
 */
import type { NamespaceCondition } from '../../api/types/core-v1.js';

/** Condition types, in kube's order. */
export const NAMESPACE_CONDITIONS = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

/** One of {@link NAMESPACE_CONDITIONS}. */
export type NamespaceConditionType = (typeof NAMESPACE_CONDITIONS)[number];

const OK: Record<NamespaceConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: {
    reason: 'ResourcesDiscovered',
    message: 'All resources successfully discovered',
  },
  NamespaceDeletionGroupVersionParsingFailure: {
    reason: 'ParsedGroupVersions',
    message: 'All legacy kube types successfully parsed',
  },
  NamespaceDeletionContentFailure: {
    reason: 'ContentDeleted',
    message: 'All content successfully deleted, may be waiting on finalization',
  },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: {
    reason: 'ContentHasNoFinalizers',
    message: 'All content-preserving finalizers finished',
  },
};

/** A failing condition found by a pass. */
export interface Failure {
  readonly type: NamespaceConditionType;
  readonly reason: string;
  readonly message: string;
}

/** What a pass over the namespace's content found. */
export interface PassFindings {
  /** Group versions whose discovery failed, with why. */
  readonly discoveryFailures: ReadonlyMap<string, string>;
  /** Errors deleting content, one per resource. */
  readonly contentErrors: readonly string[];
  /** Objects left per resource (`pods.` / `widgets.example.com`), counting only non-zero ones. */
  readonly remaining: ReadonlyMap<string, number>;
  /** Objects left per finalizer they carry. */
  readonly finalizers: ReadonlyMap<string, number>;
}

/** The failing conditions of a pass (kube's messages). */
export function failuresOf(f: PassFindings): Failure[] {
  const out: Failure[] = [];
  if (f.discoveryFailures.size > 0) {
    const parts = [...f.discoveryFailures].map(([gv, why]) => `${gv}: ${why}`).sort();
    out.push({
      type: 'NamespaceDeletionDiscoveryFailure',
      reason: 'DiscoveryFailed',
      message: `Discovery failed for some groups, ${f.discoveryFailures.size} failing: unable to retrieve the complete list of server APIs: ${parts.join(', ')}`,
    });
  }
  if (f.contentErrors.length > 0) {
    out.push({
      type: 'NamespaceDeletionContentFailure',
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${f.contentErrors.length} remaining: ${[...f.contentErrors].sort().join(', ')}`,
    });
  }
  const remaining = [...f.remaining].filter(([, n]) => n > 0);
  if (remaining.length > 0) {
    const parts = remaining.map(([gr, n]) => `${gr} has ${n} resource instances`).sort();
    out.push({
      type: 'NamespaceContentRemaining',
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${parts.join(', ')}`,
    });
  }
  const finalizers = [...f.finalizers].filter(([, n]) => n > 0);
  if (finalizers.length > 0) {
    const parts = finalizers.map(([fin, n]) => `${fin} in ${n} resource instances`).sort();
    out.push({
      type: 'NamespaceFinalizersRemaining',
      reason: 'SomeFinalizersRemain',
      message: `Some finalizers are remaining: ${parts.join(', ')}`,
    });
  }
  return out;
}

/**
 * `current` with the five conditions set from `failures` (others kept as they are), and whether
 * anything changed.
 */
export function updateConditions(
  current: readonly NamespaceCondition[],
  failures: readonly Failure[],
  now: string,
): { conditions: NamespaceCondition[]; changed: boolean } {
  const conditions = current.map((c) => ({ ...c }));
  let changed = false;
  for (const type of NAMESPACE_CONDITIONS) {
    const failure = failures.find((f) => f.type === type);
    const want = {
      type,
      status: failure === undefined ? 'False' : 'True',
      reason: failure?.reason ?? OK[type].reason,
      message: failure?.message ?? OK[type].message,
    };
    const old = conditions.find((c) => c.type === type);
    if (old === undefined) {
      conditions.push({ ...want, lastTransitionTime: now });
      changed = true;
    } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
      if (old.status !== want.status) old.lastTransitionTime = now;
      old.status = want.status;
      old.reason = want.reason;
      old.message = want.message;
      changed = true;
    }
  }
  return { conditions, changed };
}
