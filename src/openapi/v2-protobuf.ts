/**
 * The protobuf form of the v2 document: gnostic's `openapi.v2.Document`, which client-go's
 * discovery client requests from `/openapi/v2` (`Accept:
 * application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) and kubectl decodes for
 * validation, explain and apply. kube-apiserver makes it by compiling its JSON document with
 * gnostic; this module does the same for the subset of Swagger that {@link buildV2Document}
 * emits, and throws on anything else rather than drop it silently.
 *
 * Gnostic keeps vendor extensions (`x-kubernetes-...`) as YAML text (`Any.yaml`), which kubectl
 * parses with a YAML decoder; JSON is YAML, so the values are written as JSON.
 *
 * The message schema is `gnostic/OpenAPIv2.proto` beside this file (wire facts of
 * github.com/google/gnostic-models openapiv2), loaded with protobufjs on first use: only a client
 * asking for protobuf pays for it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import { findPackageRoot } from '../registry/schema.js';
import { isJsonArray, type Json, type JsonObject } from './types.js';

/** Path of the gnostic schema, relative to the package root. */
export const GNOSTIC_V2_PROTO = 'src/openapi/gnostic/OpenAPIv2.proto';

/** Stable code of {@link OpenApiEncodeError}. */
export type OpenApiEncodeErrorCode = 'OPENAPI_UNSUPPORTED_KEYWORD';

/** The document uses a keyword the protobuf conversion does not handle (a programming error). */
export class OpenApiEncodeError extends Error {
  override readonly name = 'OpenApiEncodeError';
  readonly code: OpenApiEncodeErrorCode = 'OPENAPI_UNSUPPORTED_KEYWORD';
}

type Message = Record<string, unknown>;

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !isJsonArray(v);
}

function obj(v: Json | undefined, where: string): JsonObject {
  if (!isObject(v)) throw new OpenApiEncodeError(`${where}: expected an object`);
  return v;
}

function strings(v: Json | undefined, where: string): string[] {
  if (!isJsonArray(v)) throw new OpenApiEncodeError(`${where}: expected strings`);
  return v.map((s) => str(s, where));
}

function str(v: Json | undefined, where: string): string {
  if (typeof v !== 'string') throw new OpenApiEncodeError(`${where}: expected a string`);
  return v;
}

function num(v: Json | undefined, where: string): number {
  if (typeof v !== 'number') throw new OpenApiEncodeError(`${where}: expected a number`);
  return v;
}

/** Proto fields of the numeric schema keywords. */
const NUMERIC: ReadonlyMap<string, string> = new Map([
  ['maximum', 'maximum'],
  ['minimum', 'minimum'],
  ['multipleOf', 'multiple_of'],
  ['maxLength', 'max_length'],
  ['minLength', 'min_length'],
  ['maxItems', 'max_items'],
  ['minItems', 'min_items'],
  ['maxProperties', 'max_properties'],
  ['minProperties', 'min_properties'],
]);

/** Proto fields of the boolean schema keywords (besides `uniqueItems`). */
const FLAGS: ReadonlyMap<string, string> = new Map([
  ['exclusiveMaximum', 'exclusive_maximum'],
  ['exclusiveMinimum', 'exclusive_minimum'],
]);

function unsupported(where: string, key: string): never {
  throw new OpenApiEncodeError(`${where}: keyword ${JSON.stringify(key)} has no protobuf conversion`);
}

function vendorExtension(name: string, value: Json): Message {
  return { name, value: { yaml: JSON.stringify(value) } };
}

function schema(s: JsonObject, where: string): Message {
  const out: Message = {};
  const ext: Message[] = [];
  for (const [key, v] of Object.entries(s)) {
    if (key.startsWith('x-')) {
      ext.push(vendorExtension(key, v));
      continue;
    }
    const numeric = NUMERIC.get(key);
    if (numeric !== undefined) {
      out[numeric] = num(v, where);
      continue;
    }
    const flag = FLAGS.get(key);
    if (flag !== undefined) {
      out[flag] = v === true;
      continue;
    }
    switch (key) {
      case '$ref':
        out['_ref'] = str(v, where);
        break;
      case 'format':
      case 'description':
      case 'title':
      case 'pattern':
        out[key] = str(v, where);
        break;
      case 'enum':
        if (!isJsonArray(v)) throw new OpenApiEncodeError(`${where}.enum: expected an array`);
        out['enum'] = v.map((e) => ({ yaml: JSON.stringify(e) }));
        break;
      case 'type':
        out['type'] = { value: [str(v, where)] };
        break;
      case 'required':
        out['required'] = strings(v, where);
        break;
      case 'uniqueItems':
        out['unique_items'] = v === true;
        break;
      case 'items':
        out['items'] = { schema: [schema(obj(v, where), `${where}.items`)] };
        break;
      case 'allOf':
        if (!isJsonArray(v)) throw new OpenApiEncodeError(`${where}.allOf: expected an array`);
        out['all_of'] = v.map((sub, i) => schema(obj(sub, where), `${where}.allOf[${i}]`));
        break;
      case 'additionalProperties':
        out['additional_properties'] =
          typeof v === 'boolean'
            ? { boolean: v }
            : { schema: schema(obj(v, where), `${where}.additionalProperties`) };
        break;
      case 'properties':
        out['properties'] = {
          additional_properties: Object.entries(obj(v, where)).map(([name, p]) => ({
            name,
            value: schema(obj(p, where), `${where}.${name}`),
          })),
        };
        break;
      default:
        unsupported(where, key);
    }
  }
  if (ext.length > 0) out['vendor_extension'] = ext;
  return out;
}

function parameter(p: JsonObject, where: string): Message {
  const location = str(p['in'], where);
  if (location === 'body') {
    const body: Message = {
      name: str(p['name'], where),
      in: 'body',
      schema: schema(obj(p['schema'], where), `${where}.schema`),
    };
    if (p['required'] === true) body['required'] = true;
    if (p['description'] !== undefined) body['description'] = str(p['description'], where);
    return { parameter: { body_parameter: body } };
  }
  const sub: Message = { in: location, name: str(p['name'], where), type: str(p['type'], where) };
  for (const [key, v] of Object.entries(p)) {
    if (key === 'required') sub['required'] = v === true;
    else if (key === 'description' || key === 'format') sub[key] = str(v, where);
    else if (key === 'uniqueItems') sub['unique_items'] = v === true;
    else if (key !== 'in' && key !== 'name' && key !== 'type') unsupported(where, key);
  }
  const kind =
    location === 'query'
      ? 'query_parameter_sub_schema'
      : location === 'path'
        ? 'path_parameter_sub_schema'
        : undefined;
  if (kind === undefined)
    throw new OpenApiEncodeError(`${where}: parameter location ${location} has no conversion`);
  return { parameter: { non_body_parameter: { [kind]: sub } } };
}

function parameters(v: Json | undefined, where: string): Message[] {
  if (!isJsonArray(v)) throw new OpenApiEncodeError(`${where}: expected an array`);
  return v.map((p, i) => parameter(obj(p, where), `${where}[${i}]`));
}

function responses(r: JsonObject, where: string): Message {
  return {
    response_code: Object.entries(r).map(([code, v]) => {
      const resp = obj(v, `${where}.${code}`);
      const out: Message = { description: str(resp['description'], where) };
      if (resp['schema'] !== undefined)
        out['schema'] = { schema: schema(obj(resp['schema'], where), `${where}.${code}`) };
      return { name: code, value: { response: out } };
    }),
  };
}

function operation(o: JsonObject, where: string): Message {
  const out: Message = {};
  const ext: Message[] = [];
  for (const [key, v] of Object.entries(o)) {
    if (key.startsWith('x-')) ext.push(vendorExtension(key, v));
    else if (key === 'tags' || key === 'produces' || key === 'consumes' || key === 'schemes')
      out[key] = strings(v, where);
    else if (key === 'description') out[key] = str(v, where);
    else if (key === 'operationId') out['operation_id'] = str(v, where);
    else if (key === 'parameters') out['parameters'] = parameters(v, `${where}.parameters`);
    else if (key === 'responses') out['responses'] = responses(obj(v, where), `${where}.responses`);
    else unsupported(where, key);
  }
  if (ext.length > 0) out['vendor_extension'] = ext;
  return out;
}

const METHODS: ReadonlySet<string> = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch']);

function pathItem(p: JsonObject, where: string): Message {
  const out: Message = {};
  for (const [key, v] of Object.entries(p)) {
    if (METHODS.has(key)) out[key] = operation(obj(v, where), `${where}.${key}`);
    else if (key === 'parameters') out['parameters'] = parameters(v, `${where}.parameters`);
    else unsupported(where, key);
  }
  return out;
}

/**
 * Converts a v2 document (as built by `buildV2Document`) into the plain-object form of
 * `openapi.v2.Document` that protobufjs encodes (field names as in the .proto).
 * @throws OpenApiEncodeError on a keyword outside the supported subset.
 */
export function toGnosticDocument(doc: JsonObject): Message {
  const info = obj(doc['info'], 'info');
  return {
    swagger: str(doc['swagger'], 'swagger'),
    info: { title: str(info['title'], 'info.title'), version: str(info['version'], 'info.version') },
    paths: {
      path: Object.entries(obj(doc['paths'], 'paths')).map(([name, p]) => ({
        name,
        value: pathItem(obj(p, name), name),
      })),
    },
    definitions: {
      additional_properties: Object.entries(obj(doc['definitions'], 'definitions')).map(([name, s]) => ({
        name,
        value: schema(obj(s, name), name),
      })),
    },
  };
}

/** Loads the gnostic `Document` type (once per call; callers cache the encoded bytes). */
export function loadGnosticDocumentType(
  root: string = findPackageRoot(dirname(fileURLToPath(import.meta.url))),
): protobuf.Type {
  // Loaded here, on the first /openapi/v2 protobuf request, not at server start (~30 ms).
  const { Root } = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  return new Root()
    .loadSync(join(root, GNOSTIC_V2_PROTO), { keepCase: true })
    .lookupType('openapi.v2.Document');
}

/**
 * The protobuf encoding of a v2 document (`type`: the loaded gnostic type, loaded when omitted).
 * @throws OpenApiEncodeError on a keyword outside the supported subset; an Error from protobufjs
 *   when the schema file is missing or invalid.
 */
export function encodeV2Protobuf(
  doc: JsonObject,
  type: protobuf.Type = loadGnosticDocumentType(),
): Uint8Array {
  return type.encode(toGnosticDocument(doc)).finish();
}
