/**
 * Results of a bench run: rows of named figures, printed as one table per scenario, written as
 * JSON, and rendered as a markdown report with the previous run's figures beside the new ones.
 */
import { fmt } from './stats.js';
import { targetsMarkdown } from './targets.js';

/** A figure's name is its unit too (`ops/s`, `p99 ms`, `MB/s`, `peak RSS MiB`). */
export type Figures = Readonly<Record<string, number>>;

/** "This figure ÷ the same figure of a raw store", from the same run. */
export interface Ratio {
  /** What the figure is compared with, e.g. `raw classic-level batch (ops/s)`. */
  readonly to: string;
  readonly value: number;
}

/** One measured row. */
export interface Row {
  /** Scenario name (`create`, `list`, ...). */
  readonly scenario: string;
  /** The case within the scenario (`10 clients`, `10,000 objects, RV=0`). */
  readonly case: string;
  /**
   * Who was measured: the server under test by what it is (`capstan v1.33.0+capstan (etcd)`,
   * `B: kube-apiserver v1.33.13 (etcd)` in a comparison), or a raw store.
   */
  readonly subject: string;
  readonly figures: Figures;
  readonly ratios?: readonly Ratio[];
  /** Why the row has no figures (e.g. the server does not take protobuf). */
  readonly note?: string;
}

/** One figure of one case measured on both subjects of a comparison: B ÷ A over the rounds. */
export interface Comparison {
  readonly scenario: string;
  readonly case: string;
  readonly figure: string;
  /** Median of A's values over the rounds. */
  readonly a: number;
  /** Median of B's values over the rounds. */
  readonly b: number;
  /** Median of the per-round ratios B ÷ A. */
  readonly ratio: number;
  /** Smallest and largest per-round ratio: the spread. */
  readonly low: number;
  readonly high: number;
  /** Rounds in which both sides measured the figure. */
  readonly rounds: number;
  /**
   * A distribution-free 95% confidence interval of the median ratio (order statistics of the
   * per-round ratios), from 8 rounds on: the answer to "is the difference beyond the noise".
   */
  readonly ci95?: readonly [number, number];
  /** Each of those rounds' ratio B ÷ A, in round order. */
  readonly perRound: readonly number[];
}

/** One measured server of a run. */
export interface SubjectInfo {
  /** The `subject` of its rows. */
  readonly label: string;
  /** Where it ran (spawned by the bench with which flags, or the kubeconfig's server). */
  readonly target: string;
  readonly product: string;
  readonly version: string;
  readonly backend: string;
}

/** A whole run, as written with `--json`. */
export interface RunReport {
  readonly startedAt: string;
  readonly command: string;
  readonly node: string;
  /** Where the (first) server ran: spawned by the bench, or the kubeconfig's server. */
  readonly target: string;
  /** The measured servers: one, or A and B of a comparison. */
  readonly subjects?: readonly SubjectInfo[];
  /** Rounds of each scenario (interleaved A, B / B, A in a comparison). */
  readonly rounds?: number;
  /** Unmeasured runs of each scenario on each server before the measured rounds (`--warmup-rounds`). */
  readonly warmupRounds?: number;
  readonly rows: readonly Row[];
  /** B ÷ A per figure, in a comparison. */
  readonly comparisons?: readonly Comparison[];
  /** Scenarios that failed (`name: message`); their rows say `failed`. Absent when none did. */
  readonly failures?: readonly string[];
}

function rowKey(r: Row): string {
  return `${r.scenario}\u0000${r.case}\u0000${r.subject}`;
}

/** Figure names of `rows` in first-seen order. */
function columns(rows: readonly Row[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.figures)) seen.add(k);
  return [...seen];
}

function ratioText(r: Row): string {
  return (r.ratios ?? []).map((x) => `${fmt(x.value)} × ${x.to}`).join('; ');
}

/** Rows grouped by scenario, in first-seen order. */
function byScenario(rows: readonly Row[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    let g = groups.get(r.scenario);
    if (g === undefined) groups.set(r.scenario, (g = []));
    g.push(r);
  }
  return groups;
}

/**
 * A plain-text table's lines, header first, padded into columns two spaces apart: the first two
 * columns (labels) left-aligned, the rest (figures) right-aligned.
 */
function padColumns(header: readonly string[], body: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...body.map(line)];
}

/** Plain-text tables, one per scenario, padded into columns (what the command prints). */
export function textTables(rows: readonly Row[]): string {
  const out: string[] = [];
  for (const [scenario, group] of byScenario(rows)) {
    const cols = columns(group);
    const header = ['case', 'subject', ...cols, 'ratio'];
    const body = group.map((r) => [
      r.case,
      r.subject,
      ...cols.map((c) => (r.figures[c] === undefined ? '' : fmt(r.figures[c]))),
      r.note ?? ratioText(r),
    ]);
    out.push(`== ${scenario}`, ...padColumns(header, body), '');
  }
  return out.join('\n');
}

/** B ÷ A as `0.950 (0.910–0.990, 5 rounds)`, or with the interval `0.950 (95% CI 0.93–0.97; 0.8–1.2, 20 rounds)`. */
function ratioSpread(c: Comparison): string {
  const range = `${fmt(c.low)}–${fmt(c.high)}, ${c.rounds} round${c.rounds === 1 ? '' : 's'}`;
  if (c.ci95 === undefined) return `${fmt(c.ratio)} (${range})`;
  return `${fmt(c.ratio)} (95% CI ${fmt(c.ci95[0])}–${fmt(c.ci95[1])}; ${range})`;
}

/** The comparisons as a plain-text table (what the command prints after each scenario). */
export function comparisonText(comparisons: readonly Comparison[]): string {
  if (comparisons.length === 0) return '';
  const header = ['case', 'figure', 'A', 'B', 'B/A (spread)'];
  const body = comparisons.map((c) => [c.case, c.figure, fmt(c.a), fmt(c.b), ratioSpread(c)]);
  return [`-- ${comparisons[0]?.scenario ?? ''}: B / A`, ...padColumns(header, body), ''].join('\n');
}

/** The markdown section of a comparison: subjects, then one table of every shared figure. */
function comparisonMarkdown(run: RunReport): string[] {
  const subjects = run.subjects ?? [];
  if (run.comparisons === undefined || subjects.length < 2) return [];
  const lines = [
    '## Comparison (B ÷ A)',
    '',
    ...subjects.map((s) => `- ${s.label}: ${s.target}`),
    '',
    ...(run.warmupRounds === undefined
      ? []
      : [
          `Before its measured rounds, each scenario ran ${run.warmupRounds} unmeasured warm-up round(s) on each server.`,
        ]),
    `Each scenario ran ${run.rounds ?? 1} round(s) on each server, interleaved (A then B, then B then A, ...),`,
    'so that a slow moment of the shared machine hits both. The ratio is the median of the per-round',
    'ratios B ÷ A; the spread is their smallest and largest; from 8 rounds on, a 95% confidence interval',
    'of the median ratio (order statistics) comes first. Throughput above 1: B is faster; times and',
    'memory above 1: B is slower or bigger.',
    '',
    '| scenario | case | figure | A | B | B ÷ A (spread) |',
    '|---|---|---|---:|---:|---|',
  ];
  for (const c of run.comparisons)
    lines.push(`| ${c.scenario} | ${c.case} | ${c.figure} | ${fmt(c.a)} | ${fmt(c.b)} | ${ratioSpread(c)} |`);
  lines.push('');
  return lines;
}

/**
 * The markdown report: a header naming the command and the target, then one table per scenario;
 * with `previous`, each figure that was measured before shows its old value beside it.
 */
export function markdownReport(run: RunReport, previous?: RunReport): string {
  const prev = new Map<string, Row>();
  for (const r of previous?.rows ?? []) prev.set(rowKey(r), r);
  const lines = [
    '# Capstan bench report',
    '',
    `Command: \`${run.command}\`, started ${run.startedAt}, Node ${run.node}; target: ${run.target}.`,
    '',
    ...comparisonMarkdown(run),
    ...(run.comparisons !== undefined
      ? []
      : [
          'Figures from one run on a shared machine are noisy; the ratios to the raw stores, measured in the',
          'same run, are what to compare. Ratios: throughput ours ÷ raw (higher is better); time ours ÷ raw',
          '(lower is better).',
        ]),
    previous === undefined ? '' : `Values in parentheses are the previous report's (${previous.startedAt}).`,
    '',
    targetsMarkdown(run.rows),
  ];
  for (const [scenario, group] of byScenario(run.rows)) {
    const cols = columns(group);
    lines.push(`## ${scenario}`, '');
    lines.push(`| case | subject | ${cols.join(' | ')} | ratio |`);
    lines.push(`|---|---|${cols.map(() => '---:').join('|')}|---|`);
    for (const r of group) {
      const old = prev.get(rowKey(r));
      const cells = cols.map((c) => {
        const v = r.figures[c];
        if (v === undefined) return '';
        const was = old?.figures[c];
        return was === undefined ? fmt(v) : `${fmt(v)} (${fmt(was)})`;
      });
      lines.push(`| ${r.case} | ${r.subject} | ${cells.join(' | ')} | ${r.note ?? ratioText(r)} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
