/**
 * A command-line flag parser with spf13/pflag's syntax and messages, the parser behind
 * kube-apiserver's flags, so that manifests and scripts written for it work unchanged:
 * - `--name=value` and `--name value`; bools as bare `--name` or `--name=false` (a separate
 *   `false` word is a positional argument, as in pflag);
 * - `_` in names means `-` (kube's word-separator normalization);
 * - slice flags split on commas and accumulate over repetitions (the first use replaces the
 *   default); map flags take `k=v` lists; array flags accumulate without splitting;
 * - `--` ends the flags; single-dash words are shorthands (`-h`, `-v 2`).
 * Errors are {@link FlagError} with pflag's wording (`unknown flag: --foo`).
 */
import { DurationError, formatDuration, parseDuration } from './duration.js';

/** The value kinds a flag can hold. */
export type FlagType =
  | 'string'
  | 'int'
  | 'float'
  | 'bool'
  | 'duration'
  | 'stringSlice'
  | 'stringArray'
  | 'mapStringString'
  | 'mapStringBool';

/** A parsed flag value; durations are milliseconds. */
export type FlagValue = string | number | boolean | readonly string[] | Readonly<Record<string, string>>;

/** One flag's declaration. */
export interface FlagSpec {
  readonly name: string;
  readonly type: FlagType;
  readonly default: FlagValue;
  /** One sentence or a few; wrapped in help output. */
  readonly usage: string;
  /** Help section (kube-apiserver groups flags by area). */
  readonly section: string;
  /** Accepted and stored, but nothing acts on it yet: help says so. */
  readonly notImplemented?: boolean;
  readonly shorthand?: string;
}

/** A maker of {@link FlagSpec}s of one help section: `flag(name, type, default, usage)`. */
export function flagsOfSection(
  section: string,
): (name: string, type: FlagSpec['type'], def: FlagSpec['default'], usage: string) => FlagSpec {
  return (name, type, def, usage) => ({ section, name, type, default: def, usage });
}

/** A command-line mistake; exit status 2. */
export class FlagError extends Error {
  readonly code = 'CLI_INVALID_FLAGS';
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

/** The outcome of {@link FlagSet.parse}. */
export interface ParsedFlags {
  /** Every declared flag's value (its default when not given). */
  readonly values: ReadonlyMap<string, FlagValue>;
  /** Names of the flags given on the command line. */
  readonly changed: ReadonlySet<string>;
  /** Positional arguments. */
  readonly args: readonly string[];
  /** `-h`/`--help` was given. */
  readonly help: boolean;
}

function normalize(name: string): string {
  return name.replace(/_/g, '-');
}

function parseBool(text: string): boolean | undefined {
  // Go's strconv.ParseBool.
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

function parseGoInt(text: string): number | undefined {
  // strconv.ParseInt(s, 0, 64): optional sign, 0x/0o/0b/0 prefixes, underscores between digits.
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(text);
  if (m === null) return undefined;
  const body = (m[2] ?? '').replace(/_/g, '');
  let n: number;
  if (/^0[xXoObB]/.test(body)) n = Number(body.toLowerCase());
  else if (body.length > 1 && body.startsWith('0')) n = Number.parseInt(body, 8);
  else n = Number.parseInt(body, 10);
  return m[1] === '-' ? -n : n;
}

function splitList(text: string): string[] {
  return text === '' ? [] : text.split(',').map((s) => s.trim());
}

/** How a value is shown in help, as pflag prints defaults. */
function showDefault(spec: FlagSpec): string | undefined {
  const v = spec.default;
  switch (spec.type) {
    case 'bool':
      return v === true ? 'true' : undefined;
    case 'duration':
      return formatDuration(v as number);
    case 'int':
    case 'float':
      return typeof v === 'number' && v !== 0 ? String(v) : undefined;
    case 'string':
      return v === '' ? undefined : JSON.stringify(v);
    case 'stringSlice':
    case 'stringArray':
      return (v as readonly string[]).length === 0 ? undefined : `[${(v as readonly string[]).join(',')}]`;
    default:
      return undefined;
  }
}

const TYPE_NAMES: Readonly<Record<FlagType, string>> = {
  string: 'string',
  int: 'int',
  float: 'float',
  bool: '',
  duration: 'duration',
  stringSlice: 'strings',
  stringArray: 'stringArray',
  mapStringString: 'mapStringString',
  mapStringBool: 'mapStringBool',
};

/** A set of declared flags; immutable, parse as often as needed. */
export class FlagSet {
  readonly #specs = new Map<string, FlagSpec>();
  readonly #shorthands = new Map<string, FlagSpec>();

  /** @throws Error on duplicate names (a programming mistake). */
  constructor(
    readonly command: string,
    specs: readonly FlagSpec[],
  ) {
    for (const s of specs) {
      if (this.#specs.has(s.name)) throw new Error(`duplicate flag ${s.name}`);
      this.#specs.set(s.name, s);
      if (s.shorthand !== undefined) this.#shorthands.set(s.shorthand, s);
    }
  }

  /** Declared flags in declaration order. */
  specs(): readonly FlagSpec[] {
    return [...this.#specs.values()];
  }

  /** @throws FlagError on unknown flags, missing arguments and malformed values. */
  parse(argv: readonly string[]): ParsedFlags {
    const values = new Map<string, FlagValue>();
    for (const s of this.#specs.values()) values.set(s.name, s.default);
    const changed = new Set<string>();
    const args: string[] = [];
    let help = false;
    for (let i = 0; i < argv.length; i++) {
      const word = argv[i] ?? '';
      if (word === '--') {
        args.push(...argv.slice(i + 1));
        break;
      }
      if (!word.startsWith('-') || word === '-') {
        args.push(word);
        continue;
      }
      let spec: FlagSpec | undefined;
      let inline: string | undefined;
      let display: string;
      if (word.startsWith('--')) {
        const eq = word.indexOf('=');
        const name = normalize(eq === -1 ? word.slice(2) : word.slice(2, eq));
        inline = eq === -1 ? undefined : word.slice(eq + 1);
        display = `--${name}`;
        if (name === 'help' && !this.#specs.has('help')) {
          help = true;
          continue;
        }
        spec = this.#specs.get(name);
        if (spec === undefined) throw new FlagError(`unknown flag: ${display}`);
      } else {
        const c = word.slice(1, 2);
        inline = word.length > 2 ? word.slice(word[2] === '=' ? 3 : 2) : undefined;
        display = `-${c}`;
        if (c === 'h' && !this.#shorthands.has('h')) {
          help = true;
          continue;
        }
        spec = this.#shorthands.get(c);
        if (spec === undefined) throw new FlagError(`unknown shorthand flag: '${c}' in ${word}`);
      }
      let text: string;
      if (inline !== undefined) {
        text = inline;
      } else if (spec.type === 'bool') {
        text = 'true';
      } else {
        const next = argv[i + 1];
        if (next === undefined) throw new FlagError(`flag needs an argument: ${display}`);
        text = next;
        i++;
      }
      values.set(
        spec.name,
        this.#convert(spec, text, display, changed.has(spec.name) ? values.get(spec.name) : undefined),
      );
      changed.add(spec.name);
    }
    return { values, changed, args, help };
  }

  #convert(spec: FlagSpec, text: string, display: string, previous: FlagValue | undefined): FlagValue {
    const bad = (why: string): FlagError =>
      new FlagError(`invalid argument ${JSON.stringify(text)} for "${display}" flag: ${why}`);
    switch (spec.type) {
      case 'string':
        return text;
      case 'bool': {
        const b = parseBool(text);
        if (b === undefined) throw bad(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
        return b;
      }
      case 'int': {
        const n = parseGoInt(text);
        if (n === undefined || !Number.isSafeInteger(n)) {
          throw bad(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
        }
        return n;
      }
      case 'float': {
        const n = Number(text);
        if (text.trim() === '' || !Number.isFinite(n)) {
          throw bad(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
        }
        return n;
      }
      case 'duration':
        try {
          return parseDuration(text);
        } catch (err) {
          if (err instanceof DurationError) throw bad(err.message);
          throw err;
        }
      case 'stringSlice':
        return [...((previous as readonly string[] | undefined) ?? []), ...splitList(text)];
      case 'stringArray':
        return [...((previous as readonly string[] | undefined) ?? []), text];
      case 'mapStringString':
      case 'mapStringBool': {
        const out: Record<string, string> = { ...((previous as Record<string, string> | undefined) ?? {}) };
        for (const pair of splitList(text)) {
          if (pair === '') continue;
          const eq = pair.indexOf('=');
          const key = eq === -1 ? pair : pair.slice(0, eq);
          const value = eq === -1 ? '' : pair.slice(eq + 1);
          if (spec.type === 'mapStringBool') {
            if (eq === -1) throw bad(`${pair} must be formatted as key=value`);
            if (parseBool(value) === undefined) throw bad(`invalid value of ${key}: ${value}`);
          }
          out[key] = value;
        }
        return out;
      }
    }
  }

  /** Help text: the flags by section, pflag style, with defaults and not-implemented marks. */
  usage(): string {
    const sections = new Map<string, FlagSpec[]>();
    for (const s of this.#specs.values()) {
      const list = sections.get(s.section);
      if (list === undefined) sections.set(s.section, [s]);
      else list.push(s);
    }
    const out: string[] = [];
    for (const [section, specs] of sections) {
      out.push(`${section} flags:`, '');
      for (const s of specs) {
        const type = TYPE_NAMES[s.type];
        const short = s.shorthand === undefined ? '    ' : `-${s.shorthand}, `;
        const head = `  ${short}--${s.name}${type === '' ? '' : ` ${type}`}`;
        const dflt = showDefault(s);
        let text = s.usage;
        if (dflt !== undefined) text += ` (default ${dflt})`;
        if (s.notImplemented === true) text += ' [accepted, not implemented yet]';
        out.push(head, ...wrap(text, 90).map((l) => `        ${l}`));
      }
      out.push('');
    }
    return out.join('\n');
  }
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
