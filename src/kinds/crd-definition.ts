/**
 * The CustomResourceDefinition kind's strategy: the built-in one plus kube's structural-schema
 * checks of every version's `openAPIV3Schema` (src/schema/crd-checks.ts), which need the schema
 * compiler and CEL and so cannot live in src/validation.
 */
import type { KubeObject } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import { checkCRDSchemas } from '../schema/index.js';
import type { FieldError } from '../validation/index.js';
import { BuiltInStrategy } from './builtin.js';

/** True for apiextensions.k8s.io CustomResourceDefinition. */
export function isCRDKind(type: Pick<ResourceType, 'group' | 'kind'>): boolean {
  return type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';
}

/** The strategy of CustomResourceDefinition. */
export class CRDDefinitionStrategy extends BuiltInStrategy {
  constructor(type: ResourceType) {
    super(type);
  }

  override validate(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
    return [...super.validate(obj, old), ...checkCRDSchemas(obj)];
  }
}
