/**
 * Go's `time.Parse` with the two layouts kube's times decode with, reduced to its verdict: the
 * error text Go gives for a value it refuses, or undefined. `metav1.Time` parses with
 * `time.RFC3339` (`2006-01-02T15:04:05Z07:00`; Go also takes a fraction of any length after the
 * seconds), `metav1.MicroTime` with `2006-01-02T15:04:05.000000Z07:00` (exactly six fractional
 * digits). The walk follows Go's parser element by element, so a refusal names the same rest
 * of the value and layout element (`cannot parse "Z" as ".000000"`), or the same range
 * (`month out of range`, `day out of range`, `extra text: "x"`).
 */

const RFC3339 = '2006-01-02T15:04:05Z07:00';
const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

/** Go's `strconv.Quote` for the printable ASCII that times hold; other text as JSON escapes it. */
function quote(s: string): string {
  return JSON.stringify(s);
}

const isDigit = (s: string, i: number): boolean => i < s.length && s[i]! >= '0' && s[i]! <= '9';

/** Go's `getnum`: one or two digits (exactly two when `fixed`). */
function getnum(s: string, fixed: boolean): { n: number; rest: string } | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : { n: Number(s[0]), rest: s.slice(1) };
  return { n: Number(s.slice(0, 2)), rest: s.slice(2) };
}

/** Days in `month` (1-12) of `year`, proleptic Gregorian as Go counts them. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

type Step = (value: string) => { rest: string; range?: string } | undefined;

/** The error of Go's `time.Parse(layout, value)` for kube's time layouts, or undefined. */
export function goTimeParseError(value: string, micro: boolean): string | undefined {
  const layout = micro ? RFC3339_MICRO : RFC3339;
  const cannot = (valueElem: string, layoutElem: string): string =>
    `parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(valueElem)} as ${quote(layoutElem)}`;
  const outOfRange = (what: string): string => `parsing time ${quote(value)}: ${what} out of range`;
  let year = 0;
  let month = 0;
  let day = 0;
  const number =
    (fixed: boolean, max: number, what: string, set: (n: number) => void): Step =>
    (v) => {
      const got = getnum(v, fixed);
      if (got === undefined) return undefined;
      set(got.n);
      return { rest: got.rest, ...(got.n > max ? { range: what } : {}) };
    };
  const elements: Array<[prefix: string, elem: string, step: Step]> = [
    [
      '',
      '2006',
      (v) => {
        if (v.length < 4 || !/^\d{4}/.test(v)) return undefined;
        year = Number(v.slice(0, 4));
        return { rest: v.slice(4) };
      },
    ],
    [
      '-',
      '01',
      (v) => {
        const got = getnum(v, true);
        if (got === undefined) return undefined;
        month = got.n;
        return { rest: got.rest, ...(month < 1 || month > 12 ? { range: 'month' } : {}) };
      },
    ],
    // Go checks the day against its month only once the whole value is read (below).
    ['-', '02', number(true, 99, 'day', (n) => (day = n))],
    ['T', '15', number(false, 23, 'hour', () => undefined)],
    [':', '04', number(true, 59, 'minute', () => undefined)],
    [
      ':',
      '05',
      (v) => {
        const got = getnum(v, true);
        if (got === undefined) return undefined;
        if (got.n > 59) return { rest: got.rest, range: 'second' };
        let rest = got.rest;
        // Go takes a fraction the layout does not name, of any length.
        if (!micro && rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
          let n = 2;
          while (isDigit(rest, n)) n++;
          rest = rest.slice(n);
        }
        return { rest };
      },
    ],
    ...(micro
      ? ([
          [
            '',
            '.000000',
            (v: string) =>
              v.length >= 7 && (v[0] === '.' || v[0] === ',') && /^\d{6}$/.test(v.slice(1, 7))
                ? { rest: v.slice(7) }
                : undefined,
          ],
        ] as Array<[string, string, Step]>)
      : []),
    [
      '',
      'Z07:00',
      (v) => {
        if (v.startsWith('Z')) return { rest: v.slice(1) };
        if (v.length < 6 || v[3] !== ':' || (v[0] !== '+' && v[0] !== '-')) return undefined;
        const hours = getnum(v.slice(1, 3), true);
        const minutes = getnum(v.slice(4, 6), true);
        if (hours === undefined || minutes === undefined) return undefined;
        if (hours.n > 24) return { rest: v.slice(6), range: 'time zone offset hour' };
        if (minutes.n > 60) return { rest: v.slice(6), range: 'time zone offset minute' };
        return { rest: v.slice(6) };
      },
    ],
  ];
  let rest = value;
  for (const [prefix, elem, step] of elements) {
    // Every literal here is one character: Go names the value's rest and the literal.
    if (!rest.startsWith(prefix)) return cannot(rest, prefix);
    const hold = rest.slice(prefix.length);
    const done = step(hold);
    if (done === undefined) return cannot(hold, elem);
    if (done.range !== undefined) return outOfRange(done.range);
    rest = done.rest;
  }
  if (rest !== '') return `parsing time ${quote(value)}: extra text: ${quote(rest)}`;
  if (day < 1 || day > daysInMonth(year, month)) return outOfRange('day');
  return undefined;
}
