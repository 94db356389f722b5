/**
 * The second stage of decoding: slot arrays filled by `decode.ts` in wire order become JSON
 * objects in Go struct order, with Go's `encoding/json` rules for what is shown (see
 * `decode.ts` for the list). Pure functions over plans.
 */
import { setOwn } from '../api/object.js';
import { compareUtf8 } from './encode.js';
import type { FieldPlan, MessagePlan } from './plan.js';
import {
  K_BOOL,
  K_BYTES,
  K_DOUBLE,
  K_DURATION,
  K_INT32,
  K_INT64,
  K_INT_OR_STRING,
  K_MESSAGE,
  K_QUANTITY,
  K_SCHEMA_OR_BOOL,
  K_STRING,
  K_STRING_LIST,
  L_MAP,
  L_REPEATED,
  L_SINGLE,
} from './plan.js';

type JsonObject = Record<string, unknown>;

/** Decoded values of one message, indexed by {@link FieldPlan.slot}. */
export type Slots = unknown[];

/** A message value still to be materialised. */
export class Nested {
  constructor(
    readonly plan: MessagePlan,
    readonly slots: Slots,
  ) {}
}

/** Collected map entries, materialised into a sorted object. */
export class MapEntries {
  readonly keys: string[] = [];
  readonly values: unknown[] = [];
}

/** Slots of a message absent from the wire (Go's zero value); frozen, never written. */
export const EMPTY_SLOTS: Slots = Object.freeze([]) as unknown as Slots;

/** The JSON object of decoded `slots` of message `plan`. */
export function materialize(plan: MessagePlan, slots: Slots): JsonObject {
  const out: JsonObject = {};
  into(plan, slots, out);
  return out;
}

/** Writes the JSON properties of `plan` from `slots` into `out`, in Go struct order. */
function into(plan: MessagePlan, slots: Slots, out: JsonObject): void {
  const order = plan.jsonOrder;
  for (let i = 0; i < order.length; i++) {
    const f = order[i] as FieldPlan;
    const v = slots[f.slot];
    if (f.inline) {
      into(f.message as MessagePlan, v instanceof Nested ? v.slots : EMPTY_SLOTS, out);
      continue;
    }
    if (v === undefined) {
      if (f.label !== L_SINGLE || f.pointer) {
        if (!f.omitEmpty) out[f.jsonName] = null;
      } else {
        const zero = zeroJson(f);
        if (zero !== undefined) out[f.jsonName] = zero;
      }
      continue;
    }
    if (f.label === L_REPEATED) {
      const list = v as unknown[];
      if (f.kind === K_MESSAGE) {
        const items = new Array<unknown>(list.length);
        for (let j = 0; j < list.length; j++) {
          const n = list[j] as Nested;
          items[j] = materialize(n.plan, n.slots);
        }
        out[f.jsonName] = items;
      } else {
        out[f.jsonName] = list;
      }
    } else if (f.label === L_MAP) {
      out[f.jsonName] = mapObject(f, v as MapEntries);
    } else if (v instanceof Nested) {
      out[f.jsonName] = materialize(v.plan, v.slots);
    } else if (!f.omitEmpty || !isEmptyGo(f, v)) {
      out[f.jsonName] = v;
    }
  }
}

function mapObject(f: FieldPlan, entries: MapEntries): JsonObject {
  const { keys, values } = entries;
  const order = keys.map((_, i) => i);
  // Stable sort: of duplicate keys the last one wins below, as in Go's map assignment.
  if (order.length > 1) order.sort((a, b) => compareUtf8(keys[a] as string, keys[b] as string));
  const out: JsonObject = {};
  for (const i of order) {
    const v = values[i];
    setOwn(
      out,
      keys[i] as string,
      v === undefined ? mapZero(f) : v instanceof Nested ? materialize(v.plan, v.slots) : v,
    );
  }
  return out;
}

/** Go's JSON of the zero value of a non-pointer field; undefined when omitempty drops it. */
function zeroJson(f: FieldPlan): unknown {
  switch (f.kind) {
    case K_STRING:
      return f.omitEmpty ? undefined : '';
    case K_BOOL:
      return f.omitEmpty ? undefined : false;
    case K_INT32:
    case K_INT64:
    case K_DOUBLE:
      return f.omitEmpty ? undefined : 0;
    case K_MESSAGE:
      return materialize(f.message as MessagePlan, EMPTY_SLOTS);
    default:
      return structZero(f);
  }
}

/** Go's value of a map entry whose value the wire left out. */
function mapZero(f: FieldPlan): unknown {
  switch (f.kind) {
    case K_STRING:
    case K_BYTES:
      return '';
    case K_BOOL:
      return false;
    case K_INT32:
    case K_INT64:
    case K_DOUBLE:
      return 0;
    case K_STRING_LIST:
      return [];
    case K_MESSAGE:
      return materialize(f.message as MessagePlan, EMPTY_SLOTS);
    default:
      return structZero(f);
  }
}

/** JSON of the zero value of the special structs. */
function structZero(f: FieldPlan): unknown {
  switch (f.kind) {
    case K_DURATION:
      return '0s';
    case K_INT_OR_STRING:
      return 0;
    case K_QUANTITY:
      return '0';
    case K_SCHEMA_OR_BOOL:
      return false;
    default:
      // Time, MicroTime, raw JSON, the other unions: Go writes null.
      return null;
  }
}

/**
 * What `omitempty` drops of a value that is present: a zero plain scalar (not behind a
 * pointer), an empty byte slice or string list. Never a struct (Time, Quantity, IntOrString,
 * raw JSON are structs in Go, so `"targetPort": ""` and `"data": ""` stay).
 */
function isEmptyGo(f: FieldPlan, v: unknown): boolean {
  switch (f.kind) {
    case K_STRING:
    case K_BOOL:
    case K_INT32:
    case K_INT64:
    case K_DOUBLE:
      return !f.pointer && (v === '' || v === 0 || v === false);
    case K_BYTES:
      return v === '';
    case K_STRING_LIST:
      return (v as unknown[]).length === 0;
    default:
      return false;
  }
}
