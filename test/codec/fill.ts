/**
 * A deterministic filler that sets every field of a message (as kube's round-trip fuzz
 * fixtures do), used to (re)generate `fixtures/protobuf/<group>.<version>.<Kind>.json`.
 *
 * Values are varied so that the bytes exercise every encoding: multi-byte varints, negative
 * numbers, non-ASCII strings, several map entries, every special type. Recursive
 * messages (JSONSchemaProps) are filled down to a fixed number of levels. The output is in
 * Go-normal form (see `arbitrary.ts`), so it must round-trip exactly.
 */
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
import { formatRfc3339 } from '../../src/codec/time.js';

type JsonObject = Record<string, unknown>;

const QUANTITIES = ['100m', '1Gi', '2', '1500', '512Mi', '3k'];
const BASE_SECONDS = 1704164645; // 2024-01-02T03:04:05Z

/** Fills messages; one instance per fixture so the counter makes values distinct. */
export class Filler {
  #n = 0;
  readonly #recursionLevels: number;

  /** @param recursionLevels how many times one message may occur on a path (≥ 1). */
  constructor(recursionLevels = 2) {
    this.#recursionLevels = recursionLevels;
  }

  /** Every field of `plan` set. */
  message(plan: MessagePlan, path: readonly string[] = []): JsonObject {
    const out: JsonObject = {};
    const inner = [...path, plan.name];
    for (const f of plan.jsonOrder) {
      if (f.inline) {
        Object.assign(out, this.message(f.message as MessagePlan, inner));
        continue;
      }
      const target = f.message?.name;
      if (target !== undefined && inner.filter((p) => p === target).length >= this.#recursionLevels) {
        // Cut recursion: leave a nil-able field as Go would show it unset.
        if (!f.omitEmpty) out[f.jsonName] = null;
        continue;
      }
      out[f.jsonName] = this.#field(f, inner);
    }
    return out;
  }

  #field(f: FieldPlan, path: readonly string[]): unknown {
    if (f.label === L_REPEATED) {
      const count = f.kind === K_MESSAGE ? 1 : 2;
      return Array.from({ length: count }, () => this.#value(f, path));
    }
    if (f.label === L_MAP) {
      // In UTF-8 order, as Go's JSON has map keys (unit tests cover sorting unsorted input).
      const out: JsonObject = {};
      for (const k of [`${f.jsonName}-a`, `${f.jsonName}-b`, `${f.jsonName}-\u00e9`])
        out[k] = this.#value(f, path);
      return out;
    }
    return this.#value(f, path);
  }

  #value(f: FieldPlan, path: readonly string[]): unknown {
    const n = ++this.#n;
    switch (f.kind) {
      case K_STRING:
        return n % 7 === 0 ? `${f.jsonName}-\u00fcnicode-\u{1f600}` : `${f.jsonName}-${n}`;
      case K_BOOL:
        return f.pointer ? n % 2 === 0 : true;
      case K_INT32:
        return n % 5 === 0 ? -n : n % 3 === 0 ? (n * 100003) % 2_000_000_000 : n;
      case K_INT64:
        return n % 4 === 0 ? -(n * 1_000_000_007) : n * 1_000_000_007;
      case K_DOUBLE:
        return n + 0.25;
      case K_BYTES:
        return Buffer.from(`bytes-${n}\u0000\u00ff`, 'latin1').toString('base64');
      case K_MESSAGE:
        return this.message(f.message as MessagePlan, path);
      case K_TIME:
        return formatRfc3339(BASE_SECONDS + n * 3671, 0, false);
      case K_MICROTIME:
        return formatRfc3339(BASE_SECONDS + n * 3671, ((n * 1237) % 1_000_000) * 1000, true);
      case K_DURATION:
        return formatDuration(BigInt(n) * 61_500_000_000n);
      case K_INT_OR_STRING:
        return n % 2 === 0 ? n * 11 : `${n * 5}%`;
      case K_QUANTITY:
        return QUANTITIES[n % QUANTITIES.length];
      case K_RAW_JSON:
        return f.jsonName === 'fieldsV1'
          ? { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': {} }
          : { key: `value-${n}`, number: n, list: [true, null, 1.5], nested: { b: 1, a: 'x' } };
      case K_STRING_LIST:
        return [`item-${n}`, `item-${n + 1}`];
      case K_SCHEMA_OR_BOOL:
        return n % 2 === 0 ? false : this.message(f.message as MessagePlan, path);
      case K_SCHEMA_OR_ARRAY:
        return n % 2 === 0
          ? this.message(f.message as MessagePlan, path)
          : [this.message(f.message as MessagePlan, path)];
      case K_SCHEMA_OR_STRING_ARRAY:
        return n % 2 === 0 ? [`prop-${n}`, `prop-${n + 1}`] : this.message(f.message as MessagePlan, path);
      default:
        throw new Error(`no filler for kind ${f.kind}`);
    }
  }
}
