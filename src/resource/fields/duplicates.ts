/**
 * Duplicate keys in request bodies, which `JSON.parse` and the YAML loader silently resolve
 * (the last value wins, as Go's decoders do) and kube-apiserver's field validation reports:
 *
 * - JSON: `duplicate field "spec.replicas"` per repeated key, with kube's path form (object keys
 *   joined by `.`, list items as `[i]`);
 * - YAML: kube reports the YAML decoder's text, `yaml: unmarshal errors:` followed by one
 *   `line N: key "k" already set in map` per repeated key.
 *
 * Both only scan: the body is parsed once for its value elsewhere. The JSON scanner assumes a
 * body that `JSON.parse` accepted (it is run after the parse), so it does not re-check syntax.
 */
import { createRequire } from 'node:module';

/** kube's wording of one duplicate JSON key. */
export function duplicateFieldMessage(path: string): string {
  return `duplicate field ${JSON.stringify(path)}`;
}

function joinKey(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Scanner state over one JSON text. */
class JsonScanner {
  readonly #text: string;
  #i = 0;
  readonly found: string[] = [];
  /** The next backslash at or after the last search (-1: none left). */
  #backslash: number;

  constructor(text: string) {
    this.#text = text;
    this.#backslash = text.indexOf('\\');
  }

  #ws(): void {
    const t = this.#text;
    let i = this.#i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.#i = i;
  }

  /** Reads a string starting at the opening quote; returns its decoded value. */
  #string(): string {
    const t = this.#text;
    const start = this.#i;
    let i = start + 1;
    let escaped = false;
    // Jumps from quote to quote (a native search); a backslash before the quote escapes the
    // character after it. The text parsed as JSON, so every string is closed.
    for (;;) {
      const quote = t.indexOf('"', i);
      if (quote < 0) {
        i = t.length;
        break;
      }
      const backslash = this.#backslashFrom(i);
      if (backslash < 0 || backslash > quote) {
        i = quote;
        break;
      }
      escaped = true;
      i = backslash + 2;
    }
    this.#i = i + 1;
    const raw = t.slice(start + 1, i);
    return escaped ? (JSON.parse(t.slice(start, i + 1)) as string) : raw;
  }

  /** The position of the first backslash at or after `i`, or -1: found once, kept until passed. */
  #backslashFrom(i: number): number {
    if (this.#backslash !== -1 && this.#backslash < i) this.#backslash = this.#text.indexOf('\\', i);
    return this.#backslash;
  }

  value(path: string): void {
    this.#ws();
    const c = this.#text.charCodeAt(this.#i);
    if (c === 0x7b) this.#object(path);
    else if (c === 0x5b) this.#array(path);
    else if (c === 0x22) this.#string();
    else this.#scalar();
  }

  #scalar(): void {
    const t = this.#text;
    let i = this.#i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (Number.isNaN(c) || c === 0x2c || c === 0x7d || c === 0x5d || c <= 0x20) break;
      i++;
    }
    this.#i = i;
  }

  #object(path: string): void {
    this.#i++;
    let seen: Set<string> | undefined;
    this.#ws();
    if (this.#text.charCodeAt(this.#i) === 0x7d) {
      this.#i++;
      return;
    }
    for (;;) {
      this.#ws();
      const key = this.#string();
      seen ??= new Set();
      if (seen.has(key)) this.found.push(joinKey(path, key));
      else seen.add(key);
      this.#ws();
      this.#i++; // ':'
      this.value(joinKey(path, key));
      this.#ws();
      const c = this.#text.charCodeAt(this.#i++);
      if (c !== 0x2c) return; // '}' (or the end of a malformed text)
    }
  }

  #array(path: string): void {
    this.#i++;
    this.#ws();
    if (this.#text.charCodeAt(this.#i) === 0x5d) {
      this.#i++;
      return;
    }
    for (let n = 0; ; n++) {
      this.value(`${path}[${n}]`);
      this.#ws();
      const c = this.#text.charCodeAt(this.#i++);
      if (c !== 0x2c) return;
    }
  }
}

/**
 * The paths of repeated keys in a JSON text, in document order (a key repeated twice after its
 * first occurrence is listed twice).
 * @example duplicateJsonFields('{"a":{"b":1,"b":2}}') // ['a.b']
 */
export function duplicateJsonFields(text: string): string[] {
  const scanner = new JsonScanner(text);
  scanner.value('');
  return scanner.found;
}

/** The yaml package, loaded on first use (it is large; most bodies are JSON). */
let yamlModule: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));
}

/** One `line N: key "k" already set in map` per repeated key of a YAML text (the first document). */
export function duplicateYamlKeys(text: string): string[] {
  const y = yaml();
  const lines = new y.LineCounter();
  const doc = y.parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (y.isMap(node)) {
      const seen = new Set<string>();
      for (const item of node.items) {
        const key: unknown = item.key;
        const name = y.isScalar(key) ? String(key.value) : String(key);
        if (seen.has(name)) {
          const at = y.isNode(key) && key.range ? lines.linePos(key.range[0]).line : 0;
          out.push(`line ${at}: key ${JSON.stringify(name)} already set in map`);
        } else seen.add(name);
        walk(item.value);
      }
    } else if (y.isSeq(node)) {
      for (const item of node.items) walk(item);
    }
  };
  walk(doc.contents);
  return out;
}

/** kube's single message for the duplicate keys of a YAML body. */
export function yamlDuplicateMessage(lines: readonly string[]): string {
  return `yaml: unmarshal errors:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
