/**
 * Generates `src/registry/generated/schemas.json` from every `proto/**\/*.proto`.
 *
 * Usage (after `npm run build`): `node dist/tools/gen-schemas.js [--check]`.
 * `--check` writes nothing and exits 1 when the file differs from what would be generated.
 *
 * The proto files follow the restricted format of the schema registry (`proto2`, top-level
 * messages only, `optional`/`repeated`/`map<,>` fields, marker comments directly above a
 * message or field). This parser reads exactly that, line by line, and rejects anything else
 * with file:line; protoc remains the authority on general protobuf syntax. A general parser
 * (protobufjs) was not used because it silently drops a marker separated from its field by a
 * blank line and treats trailing comments as markers.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  SCHEMA_FILE,
  SCHEMA_FORMAT,
  findPackageRoot,
  isScalarType,
  type ListType,
  type MapType,
  type PatchStrategy,
  type RawField,
  type RawMessage,
  type ScalarType,
  type SchemaDocument,
  type StructType,
} from '../src/registry/schema.js';

/** Stable codes of {@link GenSchemaError}. */
export type GenSchemaErrorCode = 'PROTO_SYNTAX' | 'BAD_MARKER' | 'UNKNOWN_TYPE' | 'BAD_SCHEMA';

/** A generation failure, located at `file:line` when it comes from a proto file. */
export class GenSchemaError extends Error {
  override readonly name = 'GenSchemaError';
  constructor(
    readonly code: GenSchemaErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Result of {@link generateSchemas}: the document and non-fatal findings. */
export interface GeneratedSchemas {
  readonly document: SchemaDocument;
  /** Ignored upstream markers and marker oddities kept as upstream wrote them. */
  readonly warnings: readonly string[];
}

interface ParsedField {
  readonly loc: string;
  readonly name: string;
  readonly number: number;
  readonly typeRef: string;
  readonly label: 'optional' | 'required' | 'repeated' | 'map';
  readonly keyType: ScalarType | undefined;
  readonly markers: Markers;
}

interface ParsedMessage {
  readonly loc: string;
  readonly pkg: string;
  readonly name: string;
  readonly markers: Markers;
  readonly fields: ParsedField[];
}

interface Markers {
  listType?: ListType;
  listMapKeys?: string[];
  mapType?: MapType;
  structType?: StructType;
  patchMergeKey?: string;
  patchStrategy?: PatchStrategy;
  optional?: true;
  required?: true;
  inline?: true;
  jsonName?: string;
  omitEmpty?: false;
}

const LIST_TYPES: readonly ListType[] = ['atomic', 'set', 'map'];
const MAP_TYPES: readonly MapType[] = ['atomic', 'granular'];
const STRUCT_TYPES: readonly StructType[] = ['atomic', 'granular'];
const PATCH_STRATEGIES: readonly PatchStrategy[] = ['merge', 'retainKeys', 'merge,retainKeys', 'replace'];
/** Protobuf allows integral and string map keys only. */
const MAP_KEY_TYPES: ReadonlySet<string> = new Set([
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
]);

/** First line of every proto file (proto/ format rule: wire facts only, no upstream prose). */
const HEADER =
  '// Wire facts of the Kubernetes API (message and field names, numbers, types, markers); no upstream prose.';

const FIELD_RE = /^(optional|required|repeated)\s+(\.?[A-Za-z_][\w.]*)\s+([A-Za-z_]\w*)\s*=\s*(\d+)\s*;$/;
const MAP_RE = /^map\s*<\s*(\w+)\s*,\s*(\.?[A-Za-z_][\w.]*)\s*>\s+([A-Za-z_]\w*)\s*=\s*(\d+)\s*;$/;

/** Parses marker comment lines (text after `//`, trimmed) into markers; warns on foreign ones. */
function parseMarkers(lines: readonly string[], loc: string, warnings: string[]): Markers {
  const m: Markers = {};
  for (const line of lines) {
    if (!line.startsWith('+')) {
      warnings.push(`${loc}: comment kept that is not a marker: ${line}`);
      continue;
    }
    const eq = line.indexOf('=');
    const key = eq < 0 ? line.slice(1) : line.slice(1, eq);
    const value = eq < 0 ? undefined : line.slice(eq + 1);
    const need = (): string => {
      if (value === undefined || value === '')
        throw new GenSchemaError('BAD_MARKER', `${loc}: +${key} needs a value`);
      return value;
    };
    const oneOf = <T extends string>(allowed: readonly T[]): T => {
      const v = need();
      const hit = allowed.find((a) => a === v);
      if (hit === undefined)
        throw new GenSchemaError('BAD_MARKER', `${loc}: +${key}=${v} is not one of ${allowed.join('|')}`);
      return hit;
    };
    switch (key) {
      case 'listType':
        m.listType = oneOf(LIST_TYPES);
        break;
      case 'listMapKey':
        (m.listMapKeys ??= []).push(need());
        break;
      case 'mapType':
        m.mapType = oneOf(MAP_TYPES);
        break;
      case 'structType':
        m.structType = oneOf(STRUCT_TYPES);
        break;
      case 'patchMergeKey':
        m.patchMergeKey = need();
        break;
      case 'patchStrategy':
        m.patchStrategy = oneOf(PATCH_STRATEGIES);
        break;
      case 'optional':
        m.optional = true;
        break;
      case 'required':
        m.required = true;
        break;
      case 'capstan:inline':
        m.inline = true;
        break;
      case 'capstan:jsonName':
        m.jsonName = need();
        break;
      case 'capstan:omitempty':
        if (value === 'false') m.omitEmpty = false;
        else if (value !== 'true')
          throw new GenSchemaError('BAD_MARKER', `${loc}: +capstan:omitempty must be true or false`);
        break;
      default:
        // Our own markers must be exact; upstream ones we do not use are only reported.
        if (key.startsWith('capstan:'))
          throw new GenSchemaError('BAD_MARKER', `${loc}: unknown marker +${key}`);
        warnings.push(`${loc}: ignored marker +${key}`);
    }
  }
  return m;
}

/** Parses one proto file of the restricted format. */
function parseFile(text: string, file: string, warnings: string[]): ParsedMessage[] {
  const messages: ParsedMessage[] = [];
  let pkg: string | undefined;
  let current: ParsedMessage | undefined;
  let comments: string[] = [];
  let commentLine = 0;
  const lines = text.split('\n');
  if ((lines[0] ?? '').trim() !== HEADER)
    warnings.push(`${file}:1: first line is not the proto/ header comment`);
  for (let i = 0; i < lines.length; i++) {
    const loc = `${file}:${i + 1}`;
    let line = (lines[i] ?? '').trim();
    if (line.startsWith('//')) {
      if (comments.length === 0) commentLine = i + 1;
      comments.push(line.slice(2).trim());
      continue;
    }
    const trailing = line.indexOf('//');
    if (trailing >= 0) line = line.slice(0, trailing).trim();
    const pending = comments;
    comments = [];
    const orphan = (): void => {
      if (pending.some((c) => c.startsWith('+'))) {
        throw new GenSchemaError(
          'BAD_MARKER',
          `${file}:${commentLine}: marker comment not directly above a message or field`,
        );
      }
    };
    if (line === '') {
      orphan();
      continue;
    }
    let match: RegExpExecArray | null;
    if ((match = /^syntax\s*=\s*["']([\w]+)["']\s*;$/.exec(line)) !== null) {
      orphan();
      if (match[1] !== 'proto2')
        throw new GenSchemaError('PROTO_SYNTAX', `${loc}: only proto2 files are supported`);
    } else if ((match = /^package\s+([\w.]+)\s*;$/.exec(line)) !== null) {
      orphan();
      pkg = match[1];
    } else if (/^(import|option)\s/.test(line)) {
      orphan();
    } else if ((match = /^message\s+([A-Za-z_]\w*)\s*\{$/.exec(line)) !== null) {
      if (current !== undefined)
        throw new GenSchemaError('PROTO_SYNTAX', `${loc}: nested messages are not supported`);
      if (pkg === undefined) throw new GenSchemaError('PROTO_SYNTAX', `${loc}: message before package`);
      current = { loc, pkg, name: match[1] ?? '', markers: parseMarkers(pending, loc, warnings), fields: [] };
      messages.push(current);
    } else if (line === '}') {
      orphan();
      if (current === undefined) throw new GenSchemaError('PROTO_SYNTAX', `${loc}: unbalanced }`);
      current = undefined;
    } else if ((match = FIELD_RE.exec(line) ?? MAP_RE.exec(line)) !== null) {
      if (current === undefined) throw new GenSchemaError('PROTO_SYNTAX', `${loc}: field outside a message`);
      const isMap = line.startsWith('map');
      const keyType = isMap ? match[1] : undefined;
      if (keyType !== undefined && !(MAP_KEY_TYPES.has(keyType) && isScalarType(keyType))) {
        throw new GenSchemaError('PROTO_SYNTAX', `${loc}: map key type ${keyType} is not allowed`);
      }
      current.fields.push({
        loc,
        name: match[3] ?? '',
        number: Number(match[4]),
        typeRef: match[2] ?? '',
        label: isMap ? 'map' : (match[1] as ParsedField['label']),
        keyType,
        markers: parseMarkers(pending, loc, warnings),
      });
    } else {
      throw new GenSchemaError('PROTO_SYNTAX', `${loc}: unsupported line: ${line}`);
    }
  }
  if (current !== undefined)
    throw new GenSchemaError('PROTO_SYNTAX', `${file}: message ${current.name} not closed`);
  return messages;
}

/** Resolves a type reference with protobuf scoping: innermost package first. */
function resolveType(ref: string, pkg: string, known: ReadonlySet<string>, loc: string): string {
  if (isScalarType(ref)) return ref;
  if (ref.startsWith('.')) {
    const fq = ref.slice(1);
    if (known.has(fq)) return fq;
  } else {
    for (let scope = pkg; ; scope = scope.slice(0, Math.max(0, scope.lastIndexOf('.')))) {
      const fq = scope === '' ? ref : `${scope}.${ref}`;
      if (known.has(fq)) return fq;
      if (scope === '') break;
    }
  }
  throw new GenSchemaError('UNKNOWN_TYPE', `${loc}: unknown type ${ref}`);
}

function toRawField(f: ParsedField, type: string): RawField {
  const m = f.markers;
  // Key order is irrelevant: the writer sorts keys.
  return {
    name: f.name,
    number: f.number,
    type,
    ...(f.label === 'optional' ? {} : { label: f.label }),
    ...(f.keyType === undefined ? {} : { keyType: f.keyType }),
    ...(m.jsonName === undefined || m.jsonName === f.name ? {} : { jsonName: m.jsonName }),
    ...(m.listType === undefined ? {} : { listType: m.listType }),
    ...(m.listMapKeys === undefined ? {} : { listMapKeys: m.listMapKeys }),
    ...(m.mapType === undefined ? {} : { mapType: m.mapType }),
    ...(m.structType === undefined ? {} : { structType: m.structType }),
    ...(m.patchMergeKey === undefined ? {} : { patchMergeKey: m.patchMergeKey }),
    ...(m.patchStrategy === undefined ? {} : { patchStrategy: m.patchStrategy }),
    ...(m.optional === undefined ? {} : { optional: true }),
    ...(m.required === undefined ? {} : { required: true }),
    ...(m.inline === undefined ? {} : { inline: true }),
    ...(m.omitEmpty === undefined ? {} : { omitEmpty: false }),
  };
}

/** JSON names of a message with inline fields flattened (for validating keys and clashes). */
function jsonNames(name: string, messages: ReadonlyMap<string, RawMessage>, stack: string[] = []): string[] {
  if (stack.includes(name))
    throw new GenSchemaError('BAD_SCHEMA', `inline cycle: ${[...stack, name].join(' -> ')}`);
  const out: string[] = [];
  for (const f of messages.get(name)?.fields ?? []) {
    if (f.inline === true) out.push(...jsonNames(f.type, messages, [...stack, name]));
    else out.push(f.jsonName ?? f.name);
  }
  return out;
}

/** Cross-message checks: inline shape, list-map keys, merge keys, clashing JSON names. */
function validate(
  messages: ReadonlyMap<string, RawMessage>,
  locs: ReadonlyMap<RawField, string>,
  warnings: string[],
): void {
  for (const [name, msg] of messages) {
    const seen = new Map<string, true>();
    for (const json of jsonNames(name, messages)) {
      if (seen.has(json)) throw new GenSchemaError('BAD_SCHEMA', `${name}: JSON name ${json} appears twice`);
      seen.set(json, true);
    }
    const numbers = new Set<number>();
    for (const f of msg.fields) {
      const loc = locs.get(f) ?? name;
      if (numbers.has(f.number))
        throw new GenSchemaError('BAD_SCHEMA', `${loc}: field number ${f.number} reused`);
      numbers.add(f.number);
      const elementIsMessage = !isScalarType(f.type);
      if (f.inline === true && (f.label !== undefined || !elementIsMessage)) {
        throw new GenSchemaError('BAD_MARKER', `${loc}: +capstan:inline needs a singular message field`);
      }
      if (f.listMapKeys !== undefined) {
        if (f.listType !== 'map' || f.label !== 'repeated' || !elementIsMessage) {
          throw new GenSchemaError(
            'BAD_MARKER',
            `${loc}: +listMapKey needs +listType=map on a repeated message field`,
          );
        }
        const names = jsonNames(f.type, messages);
        for (const k of f.listMapKeys) {
          if (!names.includes(k))
            throw new GenSchemaError('BAD_MARKER', `${loc}: list map key ${k} is not a field of ${f.type}`);
        }
      } else if (f.listType === 'map') {
        throw new GenSchemaError('BAD_MARKER', `${loc}: +listType=map without +listMapKey`);
      }
      if (f.listType !== undefined && f.label !== 'repeated') {
        warnings.push(`${loc}: +listType on a non-list field (kept as upstream has it)`);
      }
      if (f.patchMergeKey !== undefined) {
        if (!elementIsMessage) warnings.push(`${loc}: +patchMergeKey on a field of scalar type ${f.type}`);
        else if (!jsonNames(f.type, messages).includes(f.patchMergeKey)) {
          throw new GenSchemaError(
            'BAD_MARKER',
            `${loc}: patch merge key ${f.patchMergeKey} is not a field of ${f.type}`,
          );
        }
      }
    }
  }
}

/**
 * Folders of `proto/` that hold other protocols (the node agent's CRI and containerd events, in
 * proto3, loaded by protobufjs at run time), not API schemas.
 */
export const RUNTIME_PROTO_DIRS: readonly string[] = ['cri', 'containerd'];

/** Every API `*.proto` below `dir`, as sorted `/`-separated paths relative to `dir`. */
function protoFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory() && d === dir && RUNTIME_PROTO_DIRS.includes(e.name)) continue;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.proto')) out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Parses every proto file below `protoDir` and builds the schema document.
 * @throws GenSchemaError on syntax the format does not allow, unknown types, bad markers,
 *   duplicate messages, and inconsistent list/merge keys.
 */
export function generateSchemas(protoDir: string): GeneratedSchemas {
  const warnings: string[] = [];
  const parsed: ParsedMessage[] = [];
  for (const file of protoFiles(protoDir)) {
    parsed.push(...parseFile(readFileSync(join(protoDir, file), 'utf8'), file, warnings));
  }
  const known = new Set<string>();
  for (const m of parsed) {
    const fq = `${m.pkg}.${m.name}`;
    if (known.has(fq)) throw new GenSchemaError('BAD_SCHEMA', `${m.loc}: message ${fq} defined twice`);
    known.add(fq);
  }
  const messages = new Map<string, RawMessage>();
  const locs = new Map<RawField, string>();
  for (const m of parsed) {
    const fields = m.fields.map((f) => {
      const raw = toRawField(f, resolveType(f.typeRef, m.pkg, known, f.loc));
      locs.set(raw, f.loc);
      return raw;
    });
    const structType = m.markers.structType;
    messages.set(`${m.pkg}.${m.name}`, structType === undefined ? { fields } : { fields, structType });
  }
  validate(messages, locs, warnings);
  const sorted: Record<string, RawMessage> = {};
  for (const name of [...messages.keys()].sort()) sorted[name] = messages.get(name) as RawMessage;
  return {
    document: {
      '//': 'generated by tools/gen-schemas.ts from proto/; do not edit',
      format: SCHEMA_FORMAT,
      messages: sorted,
    },
    warnings,
  };
}

/** JSON with object keys sorted at every level (arrays keep their order). */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Deterministic text of a document: the `//` note first, then one message per line (so
 * diffs show which message changed), keys sorted everywhere else.
 */
export function renderSchemas(doc: SchemaDocument): string {
  const lines = Object.keys(doc.messages)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${stableStringify(doc.messages[name])}`);
  return `{"//":${JSON.stringify(doc['//'])},\n"format":${doc.format},\n"messages":{\n${lines.join(',\n')}\n}}\n`;
}

function main(argv: readonly string[]): number {
  const root = findPackageRoot(fileURLToPath(new URL('.', import.meta.url)));
  const target = join(root, SCHEMA_FILE);
  const { document, warnings } = generateSchemas(join(root, 'proto'));
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const text = renderSchemas(document);
  const count = Object.keys(document.messages).length;
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // A missing file simply differs.
    }
    if (current !== text) {
      process.stderr.write(`${SCHEMA_FILE} is out of date; run gen:schemas\n`);
      return 1;
    }
    process.stdout.write(`${SCHEMA_FILE} is up to date (${count} messages)\n`);
    return 0;
  }
  writeFileSync(target, text);
  process.stdout.write(`wrote ${SCHEMA_FILE} (${count} messages, ${text.length} bytes)\n`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
