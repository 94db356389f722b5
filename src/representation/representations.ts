/**
 * The per-server factory of representations: negotiates a request's output against what its
 * endpoint can answer, builds the {@link Representation} of the outcome, renders error Status
 * bodies in the client's format, and decodes protobuf request bodies. Holds the protobuf codec,
 * built on first use (the schema parse stays off the server's start path).
 */
import type { ProtobufCodec } from '../codec/index.js';
import { ProtobufCodec as Codec, PROTOBUF_MEDIA_TYPE } from '../codec/index.js';
import type { StatusBody } from '../api/errors.js';
import type { SchemaSet } from '../registry/schema.js';
import type { Registry, ResourceType } from '../registry/types.js';
import type { KubeObject } from '../api/object.js';
import { printerFor, type TablePrinter } from '../table/index.js';
import { JSON_MEDIA_TYPE, JsonRepresentation } from './json.js';
import { MessageTypes, STATUS_MESSAGE } from './message-types.js';
import {
  negotiate,
  statusFormat,
  type EndpointCapabilities,
  type Format,
  type Negotiated,
} from './negotiate.js';
import { PartialRepresentation } from './partial.js';
import { ConvertingRepresentation } from './converting.js';
import { conversionTo } from '../conversion/index.js';
import { ProtobufEncoder, ProtobufRepresentation } from './protobuf.js';
import { parseIncludeObject, TableRepresentation } from './table.js';
import type { Representation, RepresentedType } from './types.js';
import { YAML_MEDIA_TYPE, YamlRepresentation, yamlBytes } from './yaml.js';

/** What a request does, for negotiation. */
export type RequestShape = 'read' | 'watch' | 'write';

/** An encoded body and its content type. */
export interface EncodedBody {
  readonly contentType: string;
  readonly body: Uint8Array;
}

function partialType(version: string): RepresentedType {
  return {
    apiVersion: `meta.k8s.io/${version}`,
    kind: 'PartialObjectMetadata',
    listKind: 'PartialObjectMetadataList',
    group: 'meta.k8s.io',
    plural: '',
  };
}

/** One per server (no global state). */
export class Representations {
  readonly #types: MessageTypes;
  readonly #schemas: () => SchemaSet;
  readonly #now: () => Date;
  readonly #printer: (type: RepresentedType) => TablePrinter;
  #encoder: ProtobufEncoder | undefined;

  /**
   * @param schemas gives the schema set on the first protobuf use.
   * @param now the clock of Table ages.
   * @param printer the Table printer of a type (the server passes its kinds' strategies'; the
   *   default looks the built-in printers up by group and resource).
   */
  constructor(
    registry: Registry,
    schemas: () => SchemaSet,
    now: () => Date,
    printer: (type: RepresentedType) => TablePrinter = (t) => printerFor(t.group, t.plural),
  ) {
    this.#types = new MessageTypes(registry);
    this.#printer = printer;
    this.#schemas = schemas;
    this.#now = now;
  }

  /** The protobuf encoder (codec built on first call). */
  get protobuf(): ProtobufEncoder {
    return (this.#encoder ??= new ProtobufEncoder(new Codec(this.#schemas()), this.#types));
  }

  /** The protobuf codec. */
  get codec(): ProtobufCodec {
    return this.protobuf.codec;
  }

  /** What an endpoint of `type` doing `shape` can answer. */
  capabilities(
    type: ResourceType,
    shape: RequestShape,
    subresource: string | undefined,
  ): EndpointCapabilities {
    const read = shape !== 'write' && (subresource === undefined || subresource === 'status');
    // Virtual kinds are created (reviews), except those read from a probe (componentstatuses).
    const readable = read && (!type.virtual || type.verbs.includes('get'));
    return {
      protobuf: type.messageType !== '',
      table: readable,
      metadata: readable,
      watch: shape === 'watch',
    };
  }

  /**
   * Negotiates `accept` for the endpoint.
   * @throws ApiError 406 when nothing acceptable.
   */
  negotiate(
    accept: string | undefined,
    type: ResourceType,
    shape: RequestShape,
    subresource: string | undefined,
  ): Negotiated {
    return negotiate(accept, this.capabilities(type, shape, subresource));
  }

  /** The plain (untransformed) representation of `type` in `format`. */
  plain(format: Format, type: RepresentedType): Representation {
    switch (format) {
      case 'json':
        return new JsonRepresentation(type);
      case 'yaml':
        return new YamlRepresentation(type);
      case 'protobuf':
        return new ProtobufRepresentation(type, this.protobuf);
    }
  }

  /**
   * The representation of a negotiation outcome for `type`; `includeObject` is the request's
   * query parameter (Tables only). A type sharing storage with another version of its kind
   * converts the objects it is given first (see converting.ts).
   * @throws ApiError 400 for an invalid `includeObject` of a Table request.
   */
  representation(
    negotiated: Negotiated,
    type: RepresentedType,
    includeObject: string | undefined,
  ): Representation {
    const inner = this.#transformed(negotiated, type, includeObject);
    const convert = conversionTo(type);
    return convert === undefined ? inner : new ConvertingRepresentation(inner, type.apiVersion, convert);
  }

  #transformed(
    negotiated: Negotiated,
    type: RepresentedType,
    includeObject: string | undefined,
  ): Representation {
    const t = negotiated.transform;
    if (t === undefined) return this.plain(negotiated.format, type);
    if (t.kind === 'Table') {
      return new TableRepresentation(
        this.plain(negotiated.format, type),
        this.#printer(type),
        t,
        parseIncludeObject(includeObject),
        this.#now,
      );
    }
    return new PartialRepresentation(this.plain(negotiated.format, partialType(t.version)), t);
  }

  /** The Status body of an error, in the format the client's `Accept` prefers (JSON fallback). */
  status(accept: string | undefined, status: StatusBody): EncodedBody {
    const format = statusFormat(accept);
    if (format === 'protobuf') {
      const obj = status as unknown as KubeObject;
      const encoder = this.protobuf;
      const body = encoder.envelope(obj, encoder.codec.encodeMessage(STATUS_MESSAGE, obj));
      return { contentType: PROTOBUF_MEDIA_TYPE, body };
    }
    if (format === 'yaml') return { contentType: YAML_MEDIA_TYPE, body: yamlBytes(status) };
    return { contentType: JSON_MEDIA_TYPE, body: Buffer.from(JSON.stringify(status)) };
  }
}
