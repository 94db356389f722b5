/**
 * Rounds of a run: the same scenario run several times on each subject, interleaved, reduced to
 * one row per measured case (the median of each figure across rounds), and, with two subjects,
 * one comparison per shared figure: B ÷ A, round by round (the rounds ran side by side, so a slow
 * moment of the machine hits both sides of one round alike), with the median and the spread.
 */
import type { Comparison, Row } from './report.js';
import { median } from './stats.js';

/** The rows one subject produced in each round of one scenario (`rounds[r]`). */
export interface SubjectRounds {
  /** The subject label the rows carry (replaced by the role key when pairing). */
  readonly subject: string;
  readonly rounds: readonly (readonly Row[])[];
}

/** Pairs rows of two subjects: the subject label inside a row's subject is not part of the key. */
function roleKey(row: Row, subject: string): string {
  return `${row.scenario}\u0000${row.case}\u0000${row.subject.replace(subject, '@')}`;
}

/** One row per case of one subject, its figures (and ratios) the medians over the rounds. */
export function mergeRounds(s: SubjectRounds): Row[] {
  const groups = new Map<string, Row[]>();
  for (const round of s.rounds)
    for (const row of round) {
      const k = roleKey(row, s.subject);
      let g = groups.get(k);
      if (g === undefined) groups.set(k, (g = []));
      g.push(row);
    }
  const out: Row[] = [];
  for (const g of groups.values()) {
    const first = g[0] as Row;
    if (g.length === 1) {
      out.push(first);
      continue;
    }
    const figures: Record<string, number> = {};
    for (const name of new Set(g.flatMap((r) => Object.keys(r.figures)))) {
      const xs = g
        .map((r) => r.figures[name])
        .filter((x): x is number => x !== undefined && Number.isFinite(x));
      figures[name] = xs.length === 0 ? Number.NaN : median(xs);
    }
    const tos = [...new Set(g.flatMap((r) => (r.ratios ?? []).map((x) => x.to)))];
    const ratios = tos.map((to) => ({
      to,
      value: median(g.flatMap((r) => (r.ratios ?? []).filter((x) => x.to === to).map((x) => x.value))),
    }));
    const note = g.find((r) => r.note !== undefined)?.note;
    out.push({
      scenario: first.scenario,
      case: first.case,
      subject: first.subject,
      figures,
      ...(ratios.length === 0 ? {} : { ratios }),
      ...(note === undefined ? {} : { note }),
    });
  }
  return out;
}

/**
 * A distribution-free 95% confidence interval of the median of `xs`: the order statistics of
 * ranks ⌊(n − 1.96√n)/2⌋ and ⌈1 + (n + 1.96√n)/2⌉ (1-based; the sign test's normal
 * approximation). Undefined below 8 values, where those ranks fall outside the sample.
 */
export function medianInterval(xs: readonly number[]): [number, number] | undefined {
  const n = xs.length;
  const lo = Math.floor((n - 1.96 * Math.sqrt(n)) / 2);
  const hi = Math.ceil(1 + (n + 1.96 * Math.sqrt(n)) / 2);
  if (lo < 1 || hi > n) return undefined;
  const sorted = Float64Array.from(xs).sort();
  return [sorted[lo - 1] as number, sorted[hi - 1] as number];
}

/**
 * B ÷ A for every figure both subjects measured in the same case, from the rounds in which both
 * did. `a` and `b` are the medians of each side; `ratio` is the median of the per-round ratios,
 * `low` and `high` their extremes.
 */
export function compareRounds(a: SubjectRounds, b: SubjectRounds): Comparison[] {
  const index = (s: SubjectRounds): Map<string, Row>[] =>
    s.rounds.map((round) => new Map(round.map((r) => [roleKey(r, s.subject), r])));
  const ai = index(a);
  const bi = index(b);
  const out: Comparison[] = [];
  const seen = new Set<string>();
  for (const round of a.rounds)
    for (const row of round) {
      const key = roleKey(row, a.subject);
      if (seen.has(key)) continue;
      seen.add(key);
      for (const figure of Object.keys(row.figures)) {
        const as: number[] = [];
        const bs: number[] = [];
        const ratios: number[] = [];
        for (let r = 0; r < Math.min(ai.length, bi.length); r++) {
          const x = ai[r]?.get(key)?.figures[figure];
          const y = bi[r]?.get(key)?.figures[figure];
          if (x === undefined || y === undefined || !Number.isFinite(x) || !Number.isFinite(y)) continue;
          as.push(x);
          bs.push(y);
          if (x !== 0) ratios.push(y / x);
        }
        if (ratios.length === 0) continue;
        const ci95 = medianInterval(ratios);
        out.push({
          scenario: row.scenario,
          case: row.case,
          figure,
          a: median(as),
          b: median(bs),
          ratio: median(ratios),
          low: Math.min(...ratios),
          high: Math.max(...ratios),
          rounds: ratios.length,
          ...(ci95 === undefined ? {} : { ci95 }),
          perRound: ratios,
        });
      }
    }
  return out;
}
