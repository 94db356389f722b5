/**
 * The YAML reader of the description files. The `yaml` package reads them correctly but slowly
 * the first time (its code is cold: ~150 ms for all files, on the first OpenAPI request), while
 * the files use a tiny, regular part of YAML: comments, and block mappings indented by two spaces
 * (`package: <name>`, `messages:`, message names, `description: <text>`, `fields:` or
 * `fields: {}`, `<jsonName>: <text>`) whose values are one-line plain, single- or double-quoted
 * texts. That part is read here line by line; a file using anything else (block scalars, flow
 * collections, tabs, text YAML would read as a number, boolean or null, a repeated key, ...) goes
 * to the `yaml` package whole, so the result (and every error) is always what YAML says.
 */
import { parse } from 'yaml';

/** Keys: message names, JSON names (`$ref`, `x-kubernetes-...`) and the fixed words. */
const KEY = '([A-Za-z_$][A-Za-z0-9_$.-]*)';
const LINE = new RegExp(`^( *)${KEY}:(?: (.*))?$`);
/** YAML 1.2 core schema scalars that are not strings, and plain starts YAML treats specially. */
const NOT_PLAIN_TEXT = /^(?:[-+.0-9~]|null$|Null$|NULL$|true$|True$|TRUE$|false$|False$|FALSE$)/;
const INDICATOR = /^[?:,[\]{}#&*!|>'"%@`]/;

/** A one-line scalar's string value, or undefined when it is not a plain/quoted string here. */
function scalar(raw: string): string | undefined {
  if (raw.startsWith('"')) {
    // Escapes JSON and YAML read alike; anything else goes to the YAML parser.
    return /^"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"$/.test(raw)
      ? (JSON.parse(raw) as string)
      : undefined;
  }
  if (raw.startsWith("'")) {
    return /^'(?:[^']|'')*'$/.test(raw) ? raw.slice(1, -1).replaceAll("''", "'") : undefined;
  }
  const text = raw.trimEnd();
  if (text === '' || INDICATOR.test(text) || NOT_PLAIN_TEXT.test(text)) return undefined;
  if (text.includes(': ') || text.includes(' #') || text.endsWith(':')) return undefined;
  return text;
}

/** A mapping being read: its object, its indent, and where it goes once it has a member. */
interface Open {
  readonly indent: number;
  readonly obj: Record<string, unknown>;
  readonly owner?: Record<string, unknown>;
  readonly key?: string;
}

/** The deepest mapping the reader opens (`fields` of a message, at indent 4). */
const MAX_INDENT = 6;

/**
 * The description file's document read line by line, or undefined when it uses more YAML than
 * the line reader knows (see the module comment). Only the form is read here; whether the
 * document has the right keys is the caller's check.
 */
export function readSimpleDescriptionYaml(source: string): Record<string, unknown> | undefined {
  if (source.includes('\t') || source.includes('\r') || source.startsWith('\uFEFF')) return undefined;
  const doc: Record<string, unknown> = {};
  const stack: Open[] = [{ indent: -2, obj: doc }];
  for (const line of source.split('\n')) {
    if (/^ *(#.*)?$/.test(line)) continue;
    const m = LINE.exec(line);
    if (m === null) return undefined;
    const [, spaces = '', key = '', raw] = m;
    const indent = spaces.length;
    while ((stack.at(-1)?.indent ?? -2) >= indent) stack.pop();
    const parent = stack.at(-1);
    if (parent === undefined || indent !== parent.indent + 2) return undefined;
    if (NOT_PLAIN_TEXT.test(key) || key === '__proto__') return undefined;
    // A mapping is null in YAML until its first member.
    if (parent.owner !== undefined && parent.key !== undefined) parent.owner[parent.key] = parent.obj;
    if (Object.hasOwn(parent.obj, key)) return undefined;
    if (raw === undefined) {
      if (indent >= MAX_INDENT) return undefined;
      parent.obj[key] = null;
      stack.push({ indent, obj: {}, owner: parent.obj, key });
    } else if (raw === '{}') {
      parent.obj[key] = {};
    } else {
      const value = scalar(raw);
      if (value === undefined) return undefined;
      parent.obj[key] = value;
    }
  }
  return doc;
}

/**
 * A description file's YAML document: read line by line when it keeps to the simple form, else by
 * the `yaml` package.
 * @throws YAMLParseError / YAMLWarning as `yaml`'s `parse` does, for text that is not valid YAML.
 */
export function parseDescriptionYaml(source: string): unknown {
  return readSimpleDescriptionYaml(source) ?? parse(source);
}
