/**
 * The metric shapes of kube's HorizontalPodAutoscaler conversion: autoscaling/v2's MetricSpec and
 * MetricStatus and the v1 (v2beta1-shaped) forms kube writes into the
 * `autoscaling.alpha.kubernetes.io/metrics` and `.../current-metrics` annotations, with Go's
 * struct field order. A target's `type` is not carried in the v1 form: it is read back from the
 * fields present, as kube's conversion does (see hpa.ts).
 */
import { isJsonObject, type JsonObject } from '../api/object.js';

/** A JSON object. */
export type Obj = JsonObject;

/** `v` when it is a JSON object. */
export function obj(v: unknown): Obj | undefined {
  return isJsonObject(v) ? v : undefined;
}

/** The defined entries of `pairs`, in order (Go's struct field order). */
export function fields(pairs: readonly (readonly [string, unknown])[]): Obj {
  const out: Obj = {};
  for (const [k, v] of pairs) if (v !== undefined) out[k] = v;
  return out;
}

// ---- the mapping -------------------------------------------------------------------------------

/**
 * One field of a v1 metric source and where it lives in v2. `$` stands for `target` (specs) or
 * `current` (statuses), in v1's field name as in v2's path.
 */
type Leaf = readonly [v1: string, v2: readonly string[]];

/** Per metric type, its v1 fields in Go's order and their v2 places. */
const LEAVES: Readonly<Record<string, readonly Leaf[]>> = {
  object: [
    ['target', ['describedObject']],
    ['metricName', ['metric', 'name']],
    ['$Value', ['$', 'value']],
    ['selector', ['metric', 'selector']],
    ['averageValue', ['$', 'averageValue']],
  ],
  pods: [
    ['metricName', ['metric', 'name']],
    ['$AverageValue', ['$', 'averageValue']],
    ['selector', ['metric', 'selector']],
  ],
  resource: [
    ['name', ['name']],
    ['$AverageUtilization', ['$', 'averageUtilization']],
    ['$AverageValue', ['$', 'averageValue']],
  ],
  containerResource: [
    ['name', ['name']],
    ['$AverageUtilization', ['$', 'averageUtilization']],
    ['$AverageValue', ['$', 'averageValue']],
    ['container', ['container']],
  ],
  external: [
    ['metricName', ['metric', 'name']],
    ['metricSelector', ['metric', 'selector']],
    ['$Value', ['$', 'value']],
    ['$AverageValue', ['$', 'averageValue']],
  ],
};

/** The order of v2's fields at any depth. */
const V2_ORDER = [
  'name',
  'metric',
  'selector',
  'type',
  'value',
  'averageValue',
  'averageUtilization',
  'target',
  'current',
  'describedObject',
  'container',
];

/** A spec target's `type`, read back from the v1 fields present (kube's conversion). */
const TARGET_TYPE: Readonly<Record<string, (s: Obj) => string>> = {
  object: (s) => (s['averageValue'] === undefined ? 'Value' : 'AverageValue'),
  pods: () => 'AverageValue',
  resource: (s) => (s['targetAverageUtilization'] !== undefined ? 'Utilization' : 'AverageValue'),
  containerResource: (s) => (s['targetAverageUtilization'] !== undefined ? 'Utilization' : 'AverageValue'),
  external: (s) => (s['targetAverageValue'] === undefined ? 'Value' : 'AverageValue'),
};

function placeName(name: string, slot: string): string {
  return name.startsWith('$') ? slot + name.slice(1) : name;
}

function placePath(path: readonly string[], slot: string): string[] {
  return path.map((k) => (k === '$' ? slot : k));
}

/** A v2 metric (spec or status) in v1's annotation form. */
function toV1(m: Obj, slot: 'target' | 'current'): Obj {
  return fields([
    ['type', m['type']],
    ...Object.entries(LEAVES).map(([type, leaves]): [string, unknown] => {
      const source = obj(m[type]);
      return [
        type,
        source &&
          fields(
            leaves.map(([name, path]) => [
              placeName(name, slot),
              placePath(path, slot).reduce<unknown>((at, k) => obj(at)?.[k], source),
            ]),
          ),
      ];
    }),
  ]);
}

/** `o` with its keys, and those of the objects it was built from (`metric`, the slot), in v2's order. */
function inV2Order(o: Obj, built: readonly string[]): Obj {
  const rank = (k: string): number => V2_ORDER.indexOf(k);
  return fields(
    Object.keys(o)
      .sort((a, b) => rank(a) - rank(b))
      .map((k) => {
        const v = obj(o[k]);
        return [k, v && built.includes(k) ? inV2Order(v, []) : o[k]];
      }),
  );
}

/** A v1 annotation metric (spec or status) in v2's form. */
function fromV1(m: Obj, slot: 'target' | 'current'): Obj {
  return fields([
    ['type', m['type']],
    ...Object.entries(LEAVES).map(([type, leaves]): [string, unknown] => {
      const source = obj(m[type]);
      if (!source) return [type, undefined];
      const out: Obj = {};
      if (slot === 'target') out['target'] = { type: TARGET_TYPE[type]?.(source) };
      for (const [name, path] of leaves) {
        const at = placePath(path, slot);
        let parent = out;
        for (const k of at.slice(0, -1)) parent = obj(parent[k]) ?? (parent[k] = {});
        const value = source[placeName(name, slot)];
        if (value !== undefined) parent[at[at.length - 1] as string] = value;
      }
      return [type, inV2Order(out, ['metric', slot])];
    }),
  ]);
}

/** A v2 MetricSpec in v1's annotation form. */
export function specToV1(m: Obj): Obj {
  return toV1(m, 'target');
}

/** A v1 annotation MetricSpec in v2's form. */
export function specFromV1(m: Obj): Obj {
  return fromV1(m, 'target');
}

/** A v2 MetricStatus in v1's annotation form. */
export function statusToV1(m: Obj): Obj {
  return toV1(m, 'current');
}

/** A v1 annotation MetricStatus in v2's form. */
export function statusFromV1(m: Obj): Obj {
  return fromV1(m, 'current');
}
