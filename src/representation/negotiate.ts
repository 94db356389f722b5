/**
 * Output negotiation of the resource endpoints, as kube-apiserver decides it: walk the `Accept`
 * clauses in preference order (see accept.ts) and take the first one a serializer of this
 * endpoint can answer, with its parameters:
 *
 * - media types: `application/json`, `application/yaml`, `application/vnd.kubernetes.protobuf`
 *   (the last only for kinds with a protobuf form); `application/*` and `*\/*` pick JSON;
 * - `as=Table;g=meta.k8s.io;v=v1|v1beta1`: a Table, JSON or YAML only, on endpoints that print
 *   tables (get, list, watch of a kind with a table);
 * - `as=PartialObjectMetadata|PartialObjectMetadataList;g=meta.k8s.io;v=v1|v1beta1`: metadata
 *   only, any media type, on get, list and watch;
 * - `stream=watch`: allowed on any clause; watches need a format with a stream form (no YAML);
 * - other parameters (`charset`, `pretty`, ...) are ignored.
 *
 * A clause asking for something this endpoint cannot give is skipped, so `Table, JSON` falls
 * back to JSON. An absent or empty header means JSON. Nothing acceptable is kube's 406.
 */
import { ApiError } from '../api/errors.js';
import { parseAccept, type MediaRange } from './accept.js';

/** Wire formats of response bodies. */
export type Format = 'json' | 'yaml' | 'protobuf';

/** The server-side conversions a client can ask for with `as=`. */
export type TransformKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** A requested conversion: kind and meta.k8s.io version. */
export interface Transform {
  readonly kind: TransformKind;
  readonly version: 'v1' | 'v1beta1';
}

/** The outcome of negotiation. */
export interface Negotiated {
  readonly format: Format;
  /** Set when the clause asked for a Table or metadata only. */
  readonly transform?: Transform;
}

/** What an endpoint can answer. */
export interface EndpointCapabilities {
  /** The kind has a protobuf form (every built-in kind; custom resources do not). */
  readonly protobuf: boolean;
  /** `as=Table` is possible (get, list, watch of a kind that prints a table). */
  readonly table: boolean;
  /** `as=PartialObjectMetadata[List]` is possible (get, list, watch). */
  readonly metadata: boolean;
  /** The response is a watch stream: formats without a stream form (YAML) are out. */
  readonly watch: boolean;
}

/** The media types kube-apiserver lists in its 406 message. */
export const SUPPORTED_MEDIA_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
] as const;

const FORMAT_OF: Readonly<Record<string, Format>> = {
  json: 'json',
  yaml: 'yaml',
  'vnd.kubernetes.protobuf': 'protobuf',
};

const JSON_ONLY: Negotiated = Object.freeze({ format: 'json' });

/** Endpoint capabilities of requests that convert nothing (errors, writes). */
export const PLAIN_ENDPOINT: EndpointCapabilities = Object.freeze({
  protobuf: true,
  table: false,
  metadata: false,
  watch: false,
});

/** kube's 406 (`NewNotAcceptableError`). */
export function notAcceptableMediaType(endpoint: EndpointCapabilities): ApiError {
  const types = SUPPORTED_MEDIA_TYPES.filter(
    (t) => (endpoint.protobuf || !t.includes('protobuf')) && !(endpoint.watch && t.endsWith('yaml')),
  );
  return new ApiError('NotAcceptable', `only the following media types are accepted: ${types.join(', ')}`);
}

function formatOf(range: MediaRange, endpoint: EndpointCapabilities): Format | undefined {
  if (range.type === '*') return 'json';
  if (range.type !== 'application') return undefined;
  if (range.subtype === '*') return 'json';
  const format = FORMAT_OF[range.subtype];
  if (format === 'protobuf' && !endpoint.protobuf) return undefined;
  if (format === 'yaml' && endpoint.watch) return undefined;
  return format;
}

/** The clause's conversion; null when the clause asks for one this endpoint cannot give. */
function transformOf(
  range: MediaRange,
  format: Format,
  endpoint: EndpointCapabilities,
): Transform | undefined | null {
  const as = range.params.get('as');
  if (as === undefined || as === '') return undefined;
  const group = range.params.get('g');
  const version = range.params.get('v');
  if (group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) return null;
  switch (as) {
    case 'Table':
      return endpoint.table && format !== 'protobuf' ? { kind: 'Table', version } : null;
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return endpoint.metadata ? { kind: as, version } : null;
    default:
      return null;
  }
}

/**
 * The representation to answer with for `accept` on an endpoint with `endpoint`'s capabilities.
 * @throws ApiError 406 NotAcceptable when no clause can be answered (never anything else).
 */
export function negotiate(accept: string | undefined, endpoint: EndpointCapabilities): Negotiated {
  const clauses = parseAccept(accept);
  if (clauses.length === 0 && (accept === undefined || accept.trim() === '')) return JSON_ONLY;
  for (const range of clauses) {
    const format = formatOf(range, endpoint);
    if (format === undefined) continue;
    const stream = range.params.get('stream');
    if (stream !== undefined && stream !== '' && stream !== 'watch') continue;
    const transform = transformOf(range, format, endpoint);
    if (transform === null) continue;
    return transform === undefined ? { format } : { format, transform };
  }
  throw notAcceptableMediaType(endpoint);
}

/**
 * The format of an error `Status` for `accept`: the first clause without a conversion that names
 * a format (kube negotiates errors with the default endpoint restrictions); JSON when none does.
 * Never throws.
 */
export function statusFormat(accept: string | undefined): Format {
  for (const range of parseAccept(accept)) {
    const format = formatOf(range, PLAIN_ENDPOINT);
    if (format === undefined) continue;
    const as = range.params.get('as');
    if (as !== undefined && as !== '') continue;
    const stream = range.params.get('stream');
    if (stream !== undefined && stream !== '' && stream !== 'watch') continue;
    return format;
  }
  return 'json';
}
