/**
 * `metav1.LabelSelector` as a predicate over labels, as apimachinery's `LabelSelectorAsSelector`:
 * an absent selector matches nothing, an empty one everything; `matchLabels` and
 * `matchExpressions` (In, NotIn, Exists, DoesNotExist) are ANDed.
 */
import type { LabelSelector } from '../../api/types/meta-v1.js';

/** A selector that cannot be evaluated (unknown operator, In without values, ...). */
export class LabelSelectorError extends Error {
  readonly code = 'CONTROLLER_INVALID_SELECTOR';
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

/** A compiled selector. */
export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const NOTHING: LabelMatcher = () => false;

/**
 * Compiles `selector`.
 * @throws LabelSelectorError for operators kube does not know and malformed requirements.
 */
export function labelMatcher(selector: LabelSelector | undefined): LabelMatcher {
  if (selector === undefined) return NOTHING;
  const tests: LabelMatcher[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    tests.push((l) => l?.[k] === v);
  }
  for (const req of selector.matchExpressions ?? []) {
    const key = req.key ?? '';
    const values = req.values ?? [];
    if (key === '') throw new LabelSelectorError('a selector requirement has no key');
    switch (req.operator) {
      case 'In':
        if (values.length === 0) throw new LabelSelectorError(`${key}: for 'In', values must be non-empty`);
        tests.push((l) => l?.[key] !== undefined && values.includes(l[key]));
        break;
      case 'NotIn':
        if (values.length === 0)
          throw new LabelSelectorError(`${key}: for 'NotIn', values must be non-empty`);
        tests.push((l) => l?.[key] === undefined || !values.includes(l[key]));
        break;
      case 'Exists':
        if (values.length > 0) throw new LabelSelectorError(`${key}: values must be empty for 'Exists'`);
        tests.push((l) => l?.[key] !== undefined);
        break;
      case 'DoesNotExist':
        if (values.length > 0)
          throw new LabelSelectorError(`${key}: values must be empty for 'DoesNotExist'`);
        tests.push((l) => l?.[key] === undefined);
        break;
      default:
        throw new LabelSelectorError(
          `${JSON.stringify(req.operator ?? '')} is not a valid label selector operator`,
        );
    }
  }
  return (labels) => tests.every((t) => t(labels));
}

/** True for `{}` (selects everything). */
export function isEmptySelector(selector: LabelSelector | undefined): boolean {
  return (
    selector !== undefined &&
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}
