/**
 * What the Go structs behind the .proto files say and the .proto files cannot: whether a field
 * is a Go pointer, and whether its json tag has `omitempty`. Both decide bytes and JSON:
 *
 * - Kubernetes' generated `Marshal` (gogo-protobuf, e.g. `ObjectMeta.MarshalToSizedBuffer` in
 *   apimachinery `meta/v1/generated.pb.go`) writes a NON-pointer scalar, string or struct field
 *   always, zero value included (`name` is written as `0a 00` when empty, `generation` as
 *   `38 00`, an empty `status` as `1a 00`); a pointer field only when it is set; repeated
 *   fields per element; maps per entry in sorted key order; `[]byte` when non-nil.
 * - Go's `encoding/json` writes a struct field always (omitempty does not apply to structs), a
 *   pointer, slice or map as `null` when nil unless omitempty, and drops a zero scalar only
 *   when omitempty.
 *
 * The facts were read once from the Kubernetes 1.33 Go type definitions into
 * `generated/go-facts.ts` (checked-in data; the golden fixtures pin their effect). A field the table does not know (newer than the Go types used, or
 * of a message Go lacks) takes the schema's `omitEmpty` marker and is guessed a pointer exactly
 * when it is omitempty: newer Kubernetes fields are almost always optional pointers, and a
 * field without omitempty is almost always a plain value (`name`, `key`, `operator`).
 */
import type { FieldSchema } from '../registry/schema.js';
import { GO_FIELD_FACTS } from './generated/go-facts.js';

const POINTER = 1;
const OMIT_EMPTY = 2;

/** How Go holds one field. */
export interface GoFieldFacts {
  /** Written on the wire only when set; JSON `null`/absent when unset. */
  readonly pointer: boolean;
  /** encoding/json drops the zero value (scalars) or nil (pointers, slices, maps). */
  readonly omitEmpty: boolean;
  /** True when the facts come from the Go types, false when they are the fallback. */
  readonly known: boolean;
}

/**
 * The Go facts of `field` of message `message` (fully qualified protobuf name).
 * @example goFieldFacts('k8s.io.api.apps.v1.DeploymentSpec', replicasField) // { pointer: true, omitEmpty: true, known: true }
 */
export function goFieldFacts(message: string, field: FieldSchema): GoFieldFacts {
  const pairs = Object.hasOwn(GO_FIELD_FACTS, message) ? GO_FIELD_FACTS[message] : undefined;
  if (pairs !== undefined) {
    for (let i = 0; i < pairs.length; i += 2) {
      if (pairs[i] === field.number) {
        const flags = pairs[i + 1] ?? 0;
        return { pointer: (flags & POINTER) !== 0, omitEmpty: (flags & OMIT_EMPTY) !== 0, known: true };
      }
    }
  }
  return { pointer: field.omitEmpty, omitEmpty: field.omitEmpty, known: false };
}
