/**
 * fast-check arbitraries of objects of any message, built from the codec's compiled plans.
 *
 * They generate objects in "Go-normal" form: the JSON kube-apiserver itself would serve for
 * some Go object. That is the form a lossless round trip must reproduce exactly; other JSON
 * (a zero value in an omitempty scalar, `[]` in an omitempty list) legitimately normalises on
 * the way through Go's types. The rules mirror `src/codec/decode.ts`:
 * - non-pointer omitempty scalar: absent or non-zero; non-pointer scalar without omitempty:
 *   always present;
 * - pointer (or nil-able) field: absent (omitempty) or null (no omitempty), or any value;
 * - lists and maps: non-empty, or absent/null as above;
 * - non-pointer struct: always present.
 */
import fc from 'fast-check';
import type { FieldPlan, MessagePlan } from '../../src/codec/plan.js';
import {
  K_BOOL,
  K_BYTES,
  K_DOUBLE,
  K_DURATION,
  K_INT32,
  K_INT64,
  K_INT_OR_STRING,
  K_MESSAGE,
  K_MICROTIME,
  K_QUANTITY,
  K_RAW_JSON,
  K_SCHEMA_OR_ARRAY,
  K_SCHEMA_OR_BOOL,
  K_SCHEMA_OR_STRING_ARRAY,
  K_STRING,
  K_STRING_LIST,
  K_TIME,
  L_MAP,
  L_REPEATED,
} from '../../src/codec/plan.js';
import { formatDuration } from '../../src/codec/duration.js';
import { formatRfc3339, ZERO_TIME_SECONDS } from '../../src/codec/time.js';

type Json = unknown;
type JsonObject = Record<string, Json>;
/** A property, or ABSENT to leave it out (Json is `unknown`, so it includes the symbol). */
type Entry = readonly [string, Json];

const ABSENT = Symbol('absent');

/** Canonical quantities (Go re-serialises any other spelling canonically). */
const QUANTITIES = ['0', '1', '100m', '250m', '1500', '2k', '3M', '1Gi', '512Mi', '1536Ki', '7'];

const text = fc.string({ unit: 'binary', maxLength: 12 });
const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const int64 = fc.maxSafeInteger();
const double = fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d));
const seconds = fc.integer({ min: ZERO_TIME_SECONDS + 1, max: 253402300799 });
const time = seconds.map((s) => formatRfc3339(s, 0, false) as string);
const microTime = fc
  .tuple(seconds, fc.integer({ min: 0, max: 999999 }))
  .map(([s, us]) => formatRfc3339(s, us * 1000, true) as string);
const base64 = fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString('base64'));
// A JSON round trip drops what JSON cannot hold (-0 becomes 0).
const jsonValue = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as Json);

function isZero(v: Json): boolean {
  return v === '' || v === 0 || v === false;
}

/**
 * Zero-ish JSON a client may send for a field (Go reads them as zero values). Not the zero time
 * in a pointer: Go serves that as `null` and reads `null` back as unset, so it is the one value
 * whose normal form is not a fixed point (unit-tested on its own).
 */
function looseZero(f: FieldPlan): fc.Arbitrary<Json> {
  switch (f.kind) {
    case K_STRING:
    case K_BYTES:
      return fc.constant('');
    case K_BOOL:
      return fc.constant(false);
    case K_INT32:
    case K_INT64:
    case K_DOUBLE:
      return fc.constant(0);
    case K_MESSAGE:
      return fc.constant({});
    case K_TIME:
      return fc.constantFrom(
        null,
        f.pointer ? null : '0001-01-01T00:00:00Z',
        '2024-01-02T05:04:05.123456789+02:00',
        '2024-02-29T23:59:59-00:30',
      );
    case K_MICROTIME:
      // Go parses MicroTime with exactly six fractional digits.
      return fc.constantFrom(
        null,
        f.pointer ? null : '0001-01-01T00:00:00.000000Z',
        '2024-01-02T05:04:05.123456+02:00',
      );
    case K_QUANTITY:
      return fc.constantFrom(0, 1, 1.5, 1024, '1000m', '0.5');
    case K_INT_OR_STRING:
      return fc.constantFrom(0, '', '0');
    case K_STRING_LIST:
      return fc.constant([]);
    default:
      return fc.constant(null);
  }
}

/** Builds arbitraries over plans; `maxDepth` bounds optional nesting. */
export class PlanArbitraries {
  readonly #maxDepth: number;
  readonly #loose: boolean;

  /**
   * @param loose also generate what is valid but not Go-normal: zero values in omitempty
   *   fields, empty lists and maps, null items and values, nulls in pointers, numbers for
   *   quantities, times with offsets and fractions. Such input normalises on a round trip.
   */
  constructor(maxDepth = 3, loose = false) {
    this.#maxDepth = maxDepth;
    this.#loose = loose;
  }

  readonly #cache = new Map<string, fc.Arbitrary<JsonObject>>();

  /** Objects of message `plan` in Go-normal form. */
  message(plan: MessagePlan, depth = 0): fc.Arbitrary<JsonObject> {
    const key = `${plan.name}@${depth}`;
    let arb = this.#cache.get(key);
    if (arb === undefined) {
      arb = this.#build(plan, depth);
      this.#cache.set(key, arb);
    }
    return arb;
  }

  #build(plan: MessagePlan, depth: number): fc.Arbitrary<JsonObject> {
    const parts = plan.jsonOrder.map((f) => this.#field(f, depth));
    return fc.tuple(...parts).map((groups) => {
      const out: JsonObject = {};
      for (const group of groups) for (const [k, v] of group) if (v !== ABSENT) out[k] = v;
      return out;
    });
  }

  #field(f: FieldPlan, depth: number): fc.Arbitrary<readonly Entry[]> {
    if (f.inline) {
      return this.message(f.message as MessagePlan, depth).map((o) => Object.entries(o) as Entry[]);
    }
    const deep = depth >= this.#maxDepth;
    let value: fc.Arbitrary<Json>;
    if (f.label === L_REPEATED) {
      value =
        deep && f.kind === K_MESSAGE
          ? fc.constant(null)
          : fc.array(this.#element(f, depth), { minLength: 1, maxLength: 2 });
      value = this.#nilable(f, value);
    } else if (f.label === L_MAP) {
      value =
        deep && f.kind === K_MESSAGE
          ? fc.constant(null)
          : fc.dictionary(text, this.#element(f, depth), { minKeys: 1, maxKeys: 2, noNullPrototype: true });
      value = this.#nilable(f, value);
    } else if (f.pointer) {
      value =
        deep && (f.kind === K_MESSAGE || f.kind >= K_SCHEMA_OR_BOOL)
          ? fc.constant(null)
          : this.#element(f, depth);
      // JSON null in a pointer is nil; an empty byte slice or string list is dropped by omitempty.
      if (f.kind === K_RAW_JSON) value = value.filter((v) => v !== null);
      if (f.omitEmpty && (f.kind === K_BYTES || f.kind === K_STRING_LIST)) {
        value = value.filter((v) => v === null || (v as string | unknown[]).length > 0);
      }
      value = this.#nilable(f, value);
    } else if (f.kind === K_MESSAGE) {
      value = this.message(f.message as MessagePlan, depth + 1);
    } else {
      value = this.#element(f, depth);
      if (f.omitEmpty && (f.kind === K_STRING || f.kind === K_BOOL || f.kind <= K_DOUBLE)) {
        value = fc.option(
          value.filter((v) => !isZero(v)),
          { nil: ABSENT },
        );
      }
      if (f.kind === K_TIME || f.kind === K_MICROTIME || f.kind === K_RAW_JSON)
        value = fc.option(value, { nil: null });
    }
    if (this.#loose) value = this.#loosen(f, value, depth);
    return value.map((v) => [[f.jsonName, v] as const]);
  }

  #loosen(f: FieldPlan, value: fc.Arbitrary<Json>, depth: number): fc.Arbitrary<Json> {
    const element = (): fc.Arbitrary<Json> =>
      depth >= this.#maxDepth && f.kind === K_MESSAGE
        ? fc.constant(null)
        : fc.oneof(this.#element(f, depth), fc.constant(null));
    let other: fc.Arbitrary<Json>;
    if (f.label === L_REPEATED) other = fc.array(element(), { maxLength: 2 });
    else if (f.label === L_MAP) other = fc.dictionary(text, element(), { maxKeys: 2, noNullPrototype: true });
    else other = looseZero(f);
    return fc.oneof(value, other, fc.constant(null), fc.constant(ABSENT));
  }

  /** A pointer, list or map: absent when omitempty, null otherwise, or a value. */
  #nilable(f: FieldPlan, value: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
    return fc.option(
      value.map((v) => (v === null ? (f.omitEmpty ? ABSENT : null) : v)),
      { nil: f.omitEmpty ? ABSENT : null },
    );
  }

  /** One value of `f`'s kind (a list item, a map value, a singular value). */
  #element(f: FieldPlan, depth: number): fc.Arbitrary<Json> {
    switch (f.kind) {
      case K_STRING:
        return text;
      case K_BOOL:
        return fc.boolean();
      case K_INT32:
        return int32;
      case K_INT64:
        return int64;
      case K_DOUBLE:
        return double;
      case K_BYTES:
        return base64;
      case K_MESSAGE:
        return this.message(f.message as MessagePlan, depth + 1);
      case K_TIME:
        return time;
      case K_MICROTIME:
        return microTime;
      case K_DURATION:
        return fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }).map(formatDuration);
      case K_INT_OR_STRING:
        return fc.oneof(int32, text);
      case K_QUANTITY:
        return fc.constantFrom(...QUANTITIES);
      case K_RAW_JSON:
        return jsonValue;
      case K_STRING_LIST:
        return fc.array(text, { maxLength: 2 });
      case K_SCHEMA_OR_BOOL:
        return fc.oneof(fc.boolean(), this.message(f.message as MessagePlan, depth + 2));
      case K_SCHEMA_OR_ARRAY:
        return fc.oneof(
          this.message(f.message as MessagePlan, depth + 2),
          fc.array(this.message(f.message as MessagePlan, depth + 2), { minLength: 1, maxLength: 2 }),
        );
      case K_SCHEMA_OR_STRING_ARRAY:
        return fc.oneof(
          this.message(f.message as MessagePlan, depth + 2),
          fc.array(text, { minLength: 1, maxLength: 2 }),
        );
      default:
        throw new Error(`no arbitrary for kind ${f.kind}`);
    }
  }
}
