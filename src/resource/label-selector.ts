/**
 * Label selectors in kube's string syntax (`labelSelector=` of list, watch, deletecollection):
 * comma separated requirements `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
 * `k>1`, `k<1`. Keys must be qualified names and values label values, as kube's parser checks.
 * `!=` and `notin` also match objects without the key, as in kube.
 */
import { badRequest } from '../api/errors.js';
import { isLabelValue, isQualifiedName } from '../validation/formats.js';

type Operator = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

interface Requirement {
  readonly key: string;
  readonly op: Operator;
  readonly values: readonly string[];
}

/** A parsed label selector; the empty selector matches everything. */
export class LabelSelector {
  readonly #requirements: readonly Requirement[];

  private constructor(requirements: readonly Requirement[]) {
    this.#requirements = requirements;
  }

  /** True when the selector has no requirement (matches everything). */
  get empty(): boolean {
    return this.#requirements.length === 0;
  }

  /** Whether an object with `labels` is selected. */
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean {
    const l = labels ?? {};
    return this.#requirements.every((r) => {
      const has = Object.hasOwn(l, r.key);
      const value = has ? l[r.key] : undefined;
      switch (r.op) {
        case 'exists':
          return has;
        case '!':
          return !has;
        case '=':
        case 'in':
          return value !== undefined && r.values.includes(value);
        case '!=':
        case 'notin':
          return value === undefined || !r.values.includes(value);
        case 'gt':
        case 'lt': {
          if (value === undefined || !/^-?\d+$/.test(value)) return false;
          const n = BigInt(value);
          const bound = BigInt(r.values[0] ?? '0');
          return r.op === 'gt' ? n > bound : n < bound;
        }
      }
      return false;
    });
  }

  /**
   * Parses kube's label selector syntax.
   * @throws ApiError 400 BadRequest with kube's `unable to parse requirement` style message.
   */
  static parse(text: string | undefined): LabelSelector {
    if (text === undefined || text.trim() === '') return new LabelSelector([]);
    return new LabelSelector(new Parser(text).parse());
  }
}

type Token = { kind: 'id'; text: string } | { kind: 'op'; text: string } | { kind: 'end' };

const SPECIAL = new Set(['(', ')', ',', '=', '!', '<', '>']);

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ kind: 'op', text: two });
      i += 2;
    } else if (SPECIAL.has(c)) {
      out.push({ kind: 'op', text: c });
      i++;
    } else {
      let j = i;
      while (j < text.length && !SPECIAL.has(text[j] ?? '') && !/\s/.test(text[j] ?? '')) j++;
      out.push({ kind: 'id', text: text.slice(i, j) });
      i = j;
    }
  }
  out.push({ kind: 'end' });
  return out;
}

class Parser {
  readonly #text: string;
  readonly #tokens: Token[];
  #at = 0;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = tokenize(text);
  }

  #peek(): Token {
    return this.#tokens[this.#at] ?? { kind: 'end' };
  }

  #next(): Token {
    const t = this.#peek();
    this.#at++;
    return t;
  }

  #fail(detail: string): never {
    throw badRequest(`unable to parse requirement: ${detail}`);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      reqs.push(this.#requirement());
      const t = this.#next();
      if (t.kind === 'end') return reqs;
      if (t.kind !== 'op' || t.text !== ',')
        this.#fail(`found '${tokenText(t)}', expected: ',' or 'end' in ${JSON.stringify(this.#text)}`);
    }
  }

  #key(): string {
    const t = this.#next();
    if (t.kind !== 'id') this.#fail(`found '${tokenText(t)}', expected: identifier`);
    for (const msg of isQualifiedName(t.text))
      this.#fail(`key: Invalid value: ${JSON.stringify(t.text)}: ${msg}`);
    return t.text;
  }

  #value(): string {
    const t = this.#peek();
    if (t.kind !== 'id') return '';
    this.#at++;
    for (const msg of isLabelValue(t.text))
      this.#fail(`values[0][${t.text}]: Invalid value: ${JSON.stringify(t.text)}: ${msg}`);
    return t.text;
  }

  #requirement(): Requirement {
    const first = this.#peek();
    if (first.kind === 'op' && first.text === '!') {
      this.#at++;
      return { key: this.#key(), op: '!', values: [] };
    }
    const key = this.#key();
    const t = this.#peek();
    if (t.kind === 'end' || (t.kind === 'op' && t.text === ',')) return { key, op: 'exists', values: [] };
    this.#at++;
    if (t.kind === 'op' && (t.text === '=' || t.text === '==' || t.text === '!=')) {
      return { key, op: t.text === '!=' ? '!=' : '=', values: [this.#value()] };
    }
    if (t.kind === 'op' && (t.text === '>' || t.text === '<')) {
      const v = this.#next();
      if (v.kind !== 'id' || !/^-?\d+$/.test(v.text))
        this.#fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
      return { key, op: t.text === '>' ? 'gt' : 'lt', values: [v.text] };
    }
    if (t.kind === 'id' && (t.text === 'in' || t.text === 'notin')) {
      const open = this.#next();
      if (open.kind !== 'op' || open.text !== '(') this.#fail(`found '${tokenText(open)}', expected: '('`);
      const values: string[] = [];
      for (;;) {
        values.push(this.#value());
        const sep = this.#next();
        if (sep.kind === 'op' && sep.text === ')') break;
        if (sep.kind !== 'op' || sep.text !== ',')
          this.#fail(`found '${tokenText(sep)}', expected: ',', ')' or identifier`);
      }
      return { key, op: t.text, values };
    }
    return this.#fail(`found '${tokenText(t)}', expected: in, notin, =, ==, !=, gt, lt`);
  }
}

function tokenText(t: Token): string {
  return t.kind === 'end' ? '' : t.text;
}
