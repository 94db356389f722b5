/**
 * Request bodies of the scenarios: ConfigMaps with one `payload` entry of a chosen size, in JSON
 * or in Kubernetes' protobuf envelope. Bodies are assembled from precomputed parts (only the name
 * changes), so the client spends its time waiting on the server, not encoding.
 */

/** Media types the scenarios can send. */
export const JSON_TYPE = 'application/json';
export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/** Builds ConfigMap bodies of one size and media type. */
export interface BodyFactory {
  readonly contentType: string;
  /** The body of ConfigMap `name` (`generation` changes the payload so updates change data). */
  body(name: string, generation?: number): Buffer;
}

/**
 * The object the `n`th update of a run writes, and the generation of its body: the objects in
 * turn, each body differing from that object's previous one (its payload's first character
 * cycles through ten values), so no update is a no-op that the server answers without writing.
 */
export function updateTarget(n: number, created: number): { index: number; generation: number } {
  return { index: n % created, generation: Math.floor(n / created) + 1 };
}

/** JSON ConfigMaps with a `payload` string of `size` bytes (at least 1). */
export function jsonConfigMaps(size: number): BodyFactory {
  const payload = 'x'.repeat(Math.max(1, size));
  const head = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"';
  return {
    contentType: JSON_TYPE,
    body(name, generation = 0) {
      const p = generation === 0 ? payload : String(generation % 10) + payload.slice(1);
      return Buffer.from(`${head}${name}"},"data":{"payload":"${p}"}}`, 'latin1');
    },
  };
}

function varint(n: number, out: number[]): void {
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
}

/** A length-delimited protobuf field (wire type 2). */
function field(num: number, bytes: Buffer): Buffer {
  const head: number[] = [];
  varint((num << 3) | 2, head);
  varint(bytes.length, head);
  return Buffer.concat([Buffer.from(head), bytes]);
}

const str = (s: string): Buffer => Buffer.from(s, 'utf8');

/**
 * Protobuf ConfigMaps in the `k8s\0` envelope (`runtime.Unknown`: typeMeta = 1 with apiVersion 1
 * and kind 2, raw = 2). ConfigMap: metadata = 1 (ObjectMeta.name = 1), data = 2 (map entries,
 * key 1, value 2). Hand-encoded from those field numbers so the tool does not depend on the
 * server's codec.
 */
export function protobufConfigMaps(size: number): BodyFactory {
  const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
  const typeMeta = field(1, Buffer.concat([field(1, str('v1')), field(2, str('ConfigMap'))]));
  const payload = 'x'.repeat(Math.max(1, size));
  return {
    contentType: PROTOBUF_TYPE,
    body(name, generation = 0) {
      const p = generation === 0 ? payload : String(generation % 10) + payload.slice(1);
      const entry = field(2, Buffer.concat([field(1, str('payload')), field(2, str(p))]));
      const cm = Buffer.concat([field(1, field(1, str(name))), entry]);
      return Buffer.concat([magic, typeMeta, field(2, cm)]);
    },
  };
}

/** The factory for `contentType` (JSON or protobuf). */
export function configMapBodies(contentType: string, size: number): BodyFactory {
  return contentType === PROTOBUF_TYPE ? protobufConfigMaps(size) : jsonConfigMaps(size);
}

/** The body of a namespace named `name`. */
export function namespaceBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}
