/**
 * The CEL environment of authorization webhooks' `matchConditions` (kube's
 * `authorization/cel` compiler): one variable, `request`, the SubjectAccessReview v1 spec as
 * kube types it (`kubernetes.SubjectAccessReviewSpec`). An expression must compile there and
 * give a bool; {@link AuthorizationConditions} runs a webhook's list on a review's spec: one
 * false skips the webhook, else any error is the outcome (the webhook's failurePolicy decides).
 */
import { celGoTypeName } from './admission.js';
import { CelEnvironment, jsonToCel, type CelObjectType, type CelProgram } from './index.js';

const SPEC = 'kubernetes.SubjectAccessReviewSpec';

const REQUIREMENT = 'kubernetes.SelectorRequirement';
const OBJECT_TYPES: readonly CelObjectType[] = [
  { name: REQUIREMENT, fields: { key: 'string', operator: 'string', values: 'list<string>' } },
  {
    name: 'kubernetes.FieldSelectorAttributes',
    fields: { rawSelector: 'string', requirements: `list<${REQUIREMENT}>` },
  },
  {
    name: 'kubernetes.LabelSelectorAttributes',
    fields: { rawSelector: 'string', requirements: `list<${REQUIREMENT}>` },
  },
  {
    name: 'kubernetes.ResourceAttributes',
    fields: {
      namespace: 'string',
      verb: 'string',
      group: 'string',
      version: 'string',
      resource: 'string',
      subresource: 'string',
      name: 'string',
      fieldSelector: 'kubernetes.FieldSelectorAttributes',
      labelSelector: 'kubernetes.LabelSelectorAttributes',
    },
  },
  { name: 'kubernetes.NonResourceAttributes', fields: { path: 'string', verb: 'string' } },
  {
    name: SPEC,
    fields: {
      resourceAttributes: 'kubernetes.ResourceAttributes',
      nonResourceAttributes: 'kubernetes.NonResourceAttributes',
      user: 'string',
      groups: 'list<string>',
      extra: 'map<string, list<string>>',
      uid: 'string',
    },
  },
];

/** One field error of a webhook's matchConditions (kube's wording, `field: detail`). */
export interface ConditionError {
  /** `matchConditions[i].expression` (the caller prefixes the webhook's path). */
  readonly field: string;
  /** `Required value`, `Duplicate value: "..."`, `Invalid value: "...": ...`. */
  readonly message: string;
}

/** The outcome of running the conditions: call the webhook, skip it, or an error. */
export type ConditionOutcome = { readonly matches: boolean } | { readonly error: string };

const q = (s: string): string => JSON.stringify(s);

/** A webhook's compiled matchConditions. */
export class AuthorizationConditions {
  readonly #programs: readonly { readonly expression: string; readonly program: CelProgram }[];

  private constructor(programs: readonly { expression: string; program: CelProgram }[]) {
    this.#programs = programs;
  }

  /** True when there is nothing to check. */
  get empty(): boolean {
    return this.#programs.length === 0;
  }

  /**
   * Compiles `expressions` as kube validates them: at most 64, none blank, none repeated, each
   * compiling to a bool. Gives the conditions, or the field errors.
   */
  static compile(
    expressions: readonly string[],
  ): { readonly conditions: AuthorizationConditions } | { readonly errors: ConditionError[] } {
    if (expressions.length > 64) {
      return {
        errors: [
          {
            field: 'matchConditions',
            message: `Too many: ${expressions.length}: must have at most 64 items`,
          },
        ],
      };
    }
    const env = new CelEnvironment({
      variables: { request: SPEC },
      objectTypes: OBJECT_TYPES,
      costLimit: Infinity,
      sourceFrames: true,
    });
    const errors: ConditionError[] = [];
    const programs: { expression: string; program: CelProgram }[] = [];
    const seen = new Set<string>();
    expressions.forEach((expression, i) => {
      const field = `matchConditions[${i}].expression`;
      if (expression.trim() === '') {
        errors.push({ field, message: 'Required value' });
        return;
      }
      if (seen.has(expression)) {
        errors.push({ field, message: `Duplicate value: ${q(expression)}` });
        return;
      }
      seen.add(expression);
      const r = env.compile(expression);
      if (!r.ok) {
        errors.push({ field, message: `Invalid value: ${q(expression)}: compilation failed: ${r.message}` });
      } else if (r.program.outputType !== 'bool') {
        errors.push({
          field,
          message: `Invalid value: ${q(expression)}: must evaluate to bool but got ${celGoTypeName(r.program.outputType)}`,
        });
      } else programs.push({ expression, program: r.program });
    });
    if (errors.length > 0) return { errors };
    return { conditions: new AuthorizationConditions(programs) };
  }

  /** Runs the conditions on a SubjectAccessReview v1 spec (JSON). */
  evaluate(spec: Readonly<Record<string, unknown>>): ConditionOutcome {
    const activation = { request: jsonToCel(spec) };
    const errors: string[] = [];
    for (const { expression, program } of this.#programs) {
      const r = program.evaluate(activation);
      if (r.error !== undefined) {
        errors.push(`cel evaluation error: expression '${expression}' resulted in error: ${r.error}`);
      } else if (typeof r.value !== 'boolean') {
        errors.push(`cel evaluation error: expression '${expression}' eval result type should be bool`);
      } else if (!r.value) return { matches: false };
    }
    if (errors.length === 1) return { error: errors[0] ?? '' };
    if (errors.length > 1) return { error: `[${errors.join(', ')}]` };
    return { matches: true };
  }
}
