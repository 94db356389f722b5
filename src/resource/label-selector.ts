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
          const n = value === undefined ? undefined : int64Of(value);
          const bound = int64Of(r.values[0] ?? '');
          if (n === undefined || bound === undefined) return false;
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

/** A label value as kube compares it with `gt` and `lt`: a 64-bit integer, or none. */
function int64Of(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/**
 * kube's parser (`k8s.io/apimachinery/pkg/labels`), step for step so that its errors are kube's:
 * errors inside a requirement are prefixed `unable to parse requirement: `, errors between
 * requirements are not.
 */
class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(text: string) {
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

  /** An error inside a requirement. */
  #fail(detail: string): never {
    throw badRequest(`unable to parse requirement: ${detail}`);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const start = this.#peek();
      if (start.kind === 'end') return reqs;
      if (!startsRequirement(start))
        throw badRequest(`found '${tokenText(start)}', expected: !, identifier, or 'end of string'`);
      reqs.push(this.#requirement());
      const t = this.#next();
      if (t.kind === 'end') return reqs;
      if (!isOp(t, ',')) throw badRequest(`found '${tokenText(t)}', expected: ',' or 'end of string'`);
      const after = this.#peek();
      if (!startsRequirement(after))
        throw badRequest(`found '${tokenText(after)}', expected: identifier after ','`);
    }
  }

  #requirement(): Requirement {
    let t = this.#next();
    const absent = isOp(t, '!');
    if (absent) t = this.#next();
    if (t.kind !== 'id') this.#fail(`found '${tokenText(t)}', expected: identifier`);
    const key = t.text;
    for (const msg of isQualifiedName(key))
      this.#fail(`<nil>: Invalid value: ${JSON.stringify(key)}: ${msg}`);
    const after = this.#peek();
    if (absent) return { key, op: '!', values: [] };
    if (after.kind === 'end' || isOp(after, ',')) return { key, op: 'exists', values: [] };
    const op = this.#operator();
    const values = op === 'in' || op === 'notin' ? this.#valueSet() : [this.#exactValue()];
    // kube's NewRequirement checks the values as a sorted set.
    const checked = [...new Set(values)].sort();
    checked.forEach((v, i) => {
      if ((op === 'gt' || op === 'lt') && int64Of(v) === undefined)
        this.#fail(
          `values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      for (const msg of isLabelValue(v))
        this.#fail(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${msg}`);
    });
    return { key, op, values };
  }

  #operator(): Operator {
    const t = this.#next();
    if (t.kind === 'id' && (t.text === 'in' || t.text === 'notin')) return t.text;
    if (t.kind === 'op') {
      switch (t.text) {
        case '=':
        case '==':
          return '=';
        case '!=':
          return '!=';
        case '>':
          return 'gt';
        case '<':
          return 'lt';
      }
    }
    return this.#fail(`found '${tokenText(t)}', expected: in, notin, =, ==, !=, gt, lt`);
  }

  /** `(a,b,...)`: an empty entry (`()`, `(a,)`, `(,a)`, `(a,,b)`) is the empty value. */
  #valueSet(): string[] {
    const open = this.#next();
    if (!isOp(open, '(')) this.#fail(`found '${tokenText(open)}' expected: '('`);
    const first = this.#peek();
    if (isOp(first, ')')) {
      this.#at++;
      return [''];
    }
    if (first.kind !== 'id' && !isOp(first, ','))
      this.#fail(`found '${tokenText(first)}', expected: ',', ')' or identifier`);
    const values: string[] = [];
    for (;;) {
      const t = this.#next();
      if (t.kind === 'id') {
        values.push(t.text);
        const after = this.#peek();
        if (isOp(after, ')')) {
          this.#at++;
          return values;
        }
        if (!isOp(after, ',')) this.#fail(`found '${tokenText(after)}', expected: ',' or ')'`);
      } else if (isOp(t, ',')) {
        if (values.length === 0) values.push('');
        const after = this.#peek();
        if (isOp(after, ')')) {
          this.#at++;
          values.push('');
          return values;
        }
        if (isOp(after, ',')) {
          this.#at++;
          values.push('');
        }
      } else {
        this.#fail(`found '${tokenText(t)}', expected: ',', or identifier`);
      }
    }
  }

  /** The value after `=`, `==`, `!=`, `>` or `<`; none (the empty value) before `,` or the end. */
  #exactValue(): string {
    const t = this.#peek();
    if (t.kind === 'end' || isOp(t, ',')) return '';
    this.#at++;
    if (t.kind !== 'id') this.#fail(`found '${tokenText(t)}', expected: identifier`);
    return t.text;
  }
}

function isOp(t: Token, text: string): boolean {
  return t.kind === 'op' && t.text === text;
}

function startsRequirement(t: Token): boolean {
  return t.kind === 'id' || isOp(t, '!');
}

function tokenText(t: Token): string {
  return t.kind === 'end' ? '' : t.text;
}
