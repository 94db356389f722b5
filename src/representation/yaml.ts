/**
 * The YAML representation (`application/yaml`) of objects and lists. YAML has no stream form, so
 * negotiation never picks it for a watch. The yaml package is loaded on first use.
 */
import { createRequire } from 'node:module';
import { internalError } from '../api/errors.js';
import { listMetaObject } from './json.js';
import type { ListMetaValues, ObjectSource, Representation, RepresentedType } from './types.js';

/** `Content-Type` of YAML bodies. */
export const YAML_MEDIA_TYPE = 'application/yaml';

const encoder = new TextEncoder();

let yamlModule: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));
}

/**
 * The YAML text of a JSON value, as UTF-8 bytes, laid out as kube's (sigs.k8s.io/yaml over
 * go-yaml v2): keys sorted, sequences not indented under their key, and strings that a YAML 1.1
 * reader would take for something else (`"2026-01-01T00:00:00Z"`, `"yes"`, `"on"`) quoted.
 */
export function yamlBytes(value: unknown): Uint8Array {
  return encoder.encode(
    yaml().stringify(value, {
      aliasDuplicateObjects: false,
      sortMapEntries: true,
      indentSeq: false,
      version: '1.1',
    }),
  );
}

/** YAML of the request's type. */
export class YamlRepresentation implements Representation {
  readonly contentType = YAML_MEDIA_TYPE;
  readonly streamContentType = YAML_MEDIA_TYPE;
  readonly #type: RepresentedType;

  constructor(type: RepresentedType) {
    this.#type = type;
  }

  object(source: ObjectSource): Uint8Array {
    return source.encoded('yaml', () => yamlBytes(source.object()));
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    return yamlBytes({
      kind: this.#type.listKind,
      apiVersion: this.#type.apiVersion,
      metadata: listMetaObject(meta),
      items: items.map((s) => s.object()),
    });
  }

  event(): Uint8Array {
    // Negotiation excludes YAML for watches (kube: no stream serializer for YAML).
    throw internalError('YAML has no watch stream form');
  }
}
