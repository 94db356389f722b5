/**
 * Errors of server-side apply. Each code fixes the Kubernetes `reason` and HTTP status the API
 * answers with ({@link APPLY_ERROR_STATUS}); the HTTP layer maps them and never reads messages.
 * Messages are kube's, so clients that show them read the same text.
 */

/** Stable codes of {@link ApplyError}. */
export type ApplyErrorCode =
  /** The applied object's apiVersion/kind differ from the endpoint's (`invalid object type: apps/v1, Kind=X`). */
  | 'INVALID_OBJECT_TYPE'
  /** The applied object sets `metadata.managedFields` (`metadata.managedFields must be nil`). */
  | 'MANAGED_FIELDS_IN_CONFIG'
  /**
   * The applied object does not fit the schema: an undeclared field, a value of the wrong shape,
   * a list-map item without a key field, duplicate keys (`.spec.foo: field not declared in schema`).
   */
  | 'INVALID_CONFIG'
  /** A stored object does not fit the schema where apply needs it to (a list-map item without keys). */
  | 'INVALID_LIVE_OBJECT'
  /** The stored `metadata.managedFields` cannot be decoded (apply refuses to guess ownership). */
  | 'INVALID_MANAGED_FIELDS';

/** Kubernetes reason and HTTP status of each code. */
export const APPLY_ERROR_STATUS: Readonly<
  Record<
    ApplyErrorCode | 'APPLY_CONFLICT',
    { readonly reason: 'BadRequest' | 'Conflict' | 'InternalError'; readonly code: number }
  >
> = {
  INVALID_OBJECT_TYPE: { reason: 'BadRequest', code: 400 },
  MANAGED_FIELDS_IN_CONFIG: { reason: 'BadRequest', code: 400 },
  // kube-apiserver answers 500 here (kubernetes#122480, a 400 is proposed in #139255); the
  // client sent the bad field, so we answer 400 with kube's message.
  INVALID_CONFIG: { reason: 'BadRequest', code: 400 },
  INVALID_LIVE_OBJECT: { reason: 'InternalError', code: 500 },
  INVALID_MANAGED_FIELDS: { reason: 'InternalError', code: 500 },
  APPLY_CONFLICT: { reason: 'Conflict', code: 409 },
};

/** A failed apply or update other than a conflict; branch on `code`. */
export class ApplyError extends Error {
  override readonly name = 'ApplyError';
  readonly code: ApplyErrorCode;
  constructor(code: ApplyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A FieldsV1 document that cannot be decoded (malformed key, non-object value). */
export class FieldsV1Error extends Error {
  override readonly name = 'FieldsV1Error';
  readonly code = 'INVALID_FIELDS_V1' as const;
}

/**
 * A value that does not fit its schema, found while walking it; `path` is kube's rendering
 * of where (`.spec.template.spec.containers[name="c"]`), empty at the root.
 */
export class TypedValueError extends Error {
  override readonly name = 'TypedValueError';
  readonly code = 'INVALID_VALUE' as const;
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path === '' ? detail : `${path}: ${detail}`);
  }
}

/** One conflicting field: who owns it and where it is. */
export interface ApplyConflict {
  /** The other manager's name (`kubectl`). */
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  /** Set for Update managers (their entry is per version). */
  readonly apiVersion?: string;
  readonly subresource?: string;
  /** kube's rendering of the field path (`.spec.replicas`). */
  readonly field: string;
  /** kube's description of the manager: `"kubectl"`, `"kubectl" using apps/v1`, `"x" with subresource "status" using v1`. */
  readonly describedManager: string;
}

/** A `details.causes[]` entry, exactly as kube writes it for apply conflicts. */
export interface ConflictCause {
  readonly reason: 'FieldManagerConflict';
  readonly message: string;
  readonly field: string;
}

/**
 * An apply that would change fields other managers own, without `force`. The HTTP layer
 * answers 409 `Conflict` with `message` and `details: { causes }` (no name/kind: kube leaves
 * them out). Causes are ordered by manager identifier, then by SMD's path order.
 */
export class ApplyConflictError extends Error {
  override readonly name = 'ApplyConflictError';
  readonly code = 'APPLY_CONFLICT' as const;
  readonly causes: readonly ConflictCause[];
  constructor(readonly conflicts: readonly ApplyConflict[]) {
    super(conflictMessage(conflicts));
    this.causes = conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${c.describedManager}`,
      field: c.field,
    }));
  }
}

/**
 * kube's message: one conflict reads `Apply failed with 1 conflict: conflict with "x": .a.b`;
 * several read `Apply failed with N conflicts: conflicts with "x":\n- .a\n- .b\nconflicts with "y" using v1:\n- .c`.
 */
function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const first = conflicts[0];
  if (conflicts.length === 1 && first !== undefined) {
    return `Apply failed with 1 conflict: conflict with ${first.describedManager}: ${first.field}`;
  }
  const lines: string[] = [];
  let previous: string | undefined;
  for (const c of conflicts) {
    if (c.describedManager !== previous) lines.push(`conflicts with ${c.describedManager}:`);
    previous = c.describedManager;
    lines.push(`- ${c.field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
