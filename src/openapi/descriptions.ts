/**
 * Descriptions of the built-in messages and their fields, which the OpenAPI definitions carry so
 * that `kubectl explain` has something to say. They are Capstan's own short texts (not
 * Kubernetes' doc comments), kept as data in `proto/descriptions/*.yaml` beside the `.proto`
 * files: one file per proto package (or part of one), each
 *
 * ```yaml
 * package: k8s.io.api.apps.v1
 * messages:
 *   Deployment:
 *     description: <the message>
 *     fields:
 *       spec: <the field, keyed by its JSON name>
 * ```
 *
 * Inline fields (`+capstan:inline`) have no entry: their properties are described under the
 * inlined message. The files are read once per {@link loadDescriptions} call, which the
 * OpenAPI documents make when they are first built, never at server start.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isJsonObject, type JsonObject } from '../api/object.js';
import { findPackageRoot } from '../registry/schema.js';
import { parseDescriptionYaml } from './description-yaml.js';

/** Directory of the description files, relative to the package root. */
export const DESCRIPTIONS_DIR = 'proto/descriptions';

/** Stable codes of {@link DescriptionsError}. */
export type DescriptionsErrorCode =
  'DESCRIPTIONS_NOT_FOUND' | 'DESCRIPTIONS_INVALID' | 'DESCRIPTIONS_DUPLICATE';

/**
 * A description file cannot be read, is not of the format above, or describes a message that
 * another file (or the same one) already describes. The message names the file and the entry.
 */
export class DescriptionsError extends Error {
  override readonly name = 'DescriptionsError';
  readonly code: DescriptionsErrorCode;

  constructor(code: DescriptionsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The descriptions of one message. */
export interface MessageDescriptions {
  /** Description of the message itself. */
  readonly description: string;
  /** Field descriptions by JSON name. */
  readonly fields: ReadonlyMap<string, string>;
  /** The file it came from (for error messages and checks). */
  readonly file: string;
}

/** Descriptions by full message name (`<package>.<Message>`). Immutable. */
export class Descriptions {
  readonly #messages: ReadonlyMap<string, MessageDescriptions>;

  constructor(messages: ReadonlyMap<string, MessageDescriptions>) {
    this.#messages = messages;
  }

  /** No descriptions at all (documents without any text). */
  static none(): Descriptions {
    return new Descriptions(new Map());
  }

  /** The description of message `messageType` (fully qualified), if one is written. */
  messageDescription(messageType: string): string | undefined {
    return this.#messages.get(messageType)?.description;
  }

  /** The description of field `jsonName` (its JSON name) of message `messageType`, if written. */
  fieldDescription(messageType: string, jsonName: string): string | undefined {
    return this.#messages.get(messageType)?.fields.get(jsonName);
  }

  /** Every described message by full name (for completeness checks). */
  messages(): ReadonlyMap<string, MessageDescriptions> {
    return this.#messages;
  }
}

/** Absolute path of this package's description directory. */
export function defaultDescriptionsDir(): string {
  return join(findPackageRoot(dirname(fileURLToPath(import.meta.url))), DESCRIPTIONS_DIR);
}

/** A `DESCRIPTIONS_INVALID` error about `file`. */
function invalid(file: string, message: string, cause?: unknown): DescriptionsError {
  return new DescriptionsError(
    'DESCRIPTIONS_INVALID',
    `${file}: ${message}`,
    cause === undefined ? undefined : { cause },
  );
}

function text(v: unknown, file: string, where: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalid(file, `${where} must be a non-empty string`);
  return v.trim();
}

function onlyKeys(v: JsonObject, allowed: readonly string[], file: string, where: string): void {
  for (const k of Object.keys(v))
    if (!allowed.includes(k))
      throw invalid(file, `${where} has unknown key ${JSON.stringify(k)} (allowed: ${allowed.join(', ')})`);
}

const PACKAGE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const MESSAGE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The messages of one description file, by full name, in file order.
 * @param file the name used in error messages.
 * @throws DescriptionsError `DESCRIPTIONS_INVALID` naming the file and entry at fault (YAML
 *   syntax, duplicate keys, a missing or non-string text, unknown keys).
 */
export function parseDescriptionFile(source: string, file: string): Map<string, MessageDescriptions> {
  let doc: unknown;
  try {
    doc = parseDescriptionYaml(source);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw invalid(file, `not valid YAML: ${detail}`, cause);
  }
  if (!isJsonObject(doc)) throw invalid(file, `expected a mapping with package and messages`);
  onlyKeys(doc, ['package', 'messages'], file, 'the file');
  const pkg = text(doc['package'], file, 'package');
  if (!PACKAGE.test(pkg)) throw invalid(file, `package ${JSON.stringify(pkg)} is not a proto package name`);
  const messages = doc['messages'];
  if (!isJsonObject(messages)) throw invalid(file, `messages must be a mapping of message names`);
  const out = new Map<string, MessageDescriptions>();
  for (const [name, entry] of Object.entries(messages)) {
    const where = `message ${name}`;
    if (!MESSAGE.test(name)) throw invalid(file, `${JSON.stringify(name)} is not a message name`);
    if (!isJsonObject(entry)) throw invalid(file, `${where} must be a mapping with description and fields`);
    onlyKeys(entry, ['description', 'fields'], file, where);
    const description = text(entry['description'], file, `${where} description`);
    const rawFields = entry['fields'];
    if (!isJsonObject(rawFields))
      throw invalid(file, `${where} fields must be a mapping of JSON names (write "fields: {}" for none)`);
    const fields = new Map<string, string>();
    for (const [jsonName, value] of Object.entries(rawFields))
      fields.set(jsonName, text(value, file, `${where} field ${jsonName}`));
    out.set(`${pkg}.${name}`, { description, fields, file });
  }
  return out;
}

/**
 * Reads and merges every `*.yaml` file of `dir` (in name order), synchronously: it runs once,
 * when the OpenAPI definitions are first built.
 * @param dir defaults to {@link defaultDescriptionsDir}.
 * @throws DescriptionsError `DESCRIPTIONS_NOT_FOUND` when the directory or a file cannot be read,
 *   `DESCRIPTIONS_INVALID` for a malformed file, `DESCRIPTIONS_DUPLICATE` when two entries
 *   describe the same message (both files named).
 */
export function loadDescriptions(dir: string = defaultDescriptionsDir()): Descriptions {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.yaml'));
  } catch (cause) {
    throw new DescriptionsError('DESCRIPTIONS_NOT_FOUND', `cannot read the description directory ${dir}`, {
      cause,
    });
  }
  const merged = new Map<string, MessageDescriptions>();
  for (const name of names.sort()) {
    const path = join(dir, name);
    let source: string;
    try {
      source = readFileSync(path, 'utf8');
    } catch (cause) {
      throw new DescriptionsError('DESCRIPTIONS_NOT_FOUND', `cannot read ${path}`, { cause });
    }
    for (const [message, entry] of parseDescriptionFile(source, name)) {
      const earlier = merged.get(message);
      if (earlier !== undefined)
        throw new DescriptionsError(
          'DESCRIPTIONS_DUPLICATE',
          `${name}: message ${message} is already described in ${earlier.file}`,
        );
      merged.set(message, entry);
    }
  }
  return new Descriptions(merged);
}
