/**
 * The strategies of the served kinds, one per group and kind (the versions of a kind share it).
 * Built from the registry for the built-in kinds; {@link KindStrategies.set} and
 * {@link KindStrategies.delete} add and remove kinds at run time (custom resources).
 */
import type { Registry } from '../registry/types.js';
import { BuiltInStrategy } from './builtin.js';
import { AdmissionExpressionStrategy, hasAdmissionExpressions } from './admission-expressions.js';
import { CRDDefinitionStrategy, isCRDKind } from './crd-definition.js';
import type { KindStrategy } from './strategy.js';

/** A group and kind (any `ResourceType` is one). */
export interface KindRef {
  readonly group: string;
  readonly kind: string;
}

function keyOf(type: KindRef): string {
  return `${type.group}/${type.kind}`;
}

/** Strategies by group and kind. One per server (no global state). */
export class KindStrategies {
  readonly #byKind = new Map<string, KindStrategy>();

  /** The strategies of every kind `registry` serves. */
  static fromRegistry(registry: Registry): KindStrategies {
    const strategies = new KindStrategies();
    for (const type of registry.all()) {
      if (strategies.has(type)) continue;
      strategies.set(
        type,
        isCRDKind(type)
          ? new CRDDefinitionStrategy(type)
          : hasAdmissionExpressions(type)
            ? new AdmissionExpressionStrategy(type)
            : new BuiltInStrategy(type),
      );
    }
    return strategies;
  }

  /**
   * The strategy of `type`.
   * @throws Error when the kind has none (a kind the registry serves always has one: a bug).
   */
  of(type: KindRef): KindStrategy {
    const strategy = this.#byKind.get(keyOf(type));
    if (strategy === undefined) throw new Error(`no strategy for kind ${keyOf(type)}`);
    return strategy;
  }

  /** The strategy of `type`, or undefined when it has none (PartialObjectMetadata, ...). */
  find(type: KindRef): KindStrategy | undefined {
    return this.#byKind.get(keyOf(type));
  }

  /** True when `type` has a strategy. */
  has(type: KindRef): boolean {
    return this.#byKind.has(keyOf(type));
  }

  /** Sets (adds or replaces) the strategy of `type`. */
  set(type: KindRef, strategy: KindStrategy): void {
    this.#byKind.set(keyOf(type), strategy);
  }

  /** Removes the strategy of `type`; true when it had one. */
  delete(type: KindRef): boolean {
    return this.#byKind.delete(keyOf(type));
  }
}
