/**
 * The goals of issues 31 and 29, checked against a run's rows: one line each, with the figures
 * and whether the goal is met (or why it cannot be judged, e.g. no reference stack ran).
 */
import type { Row } from '../report.js';
import { fmt } from '../stats.js';
import { CEILING_SUBJECT as CEILING, IN_FLIGHT } from './manager-ceiling.js';

const A = 'A: capstan';
const B = 'B: kube';

function figure(rows: readonly Row[], subject: string, casePrefix: string, name: string): number | undefined {
  const row = rows.find(
    (r) => r.subject === subject && r.case.startsWith(casePrefix) && r.figures[name] !== undefined,
  );
  const x = row?.figures[name];
  return x !== undefined && Number.isFinite(x) ? x : undefined;
}

/** The largest value of figure `name` over a subject's rows. */
function peak(rows: readonly Row[], subject: string, name: string): number | undefined {
  const xs = rows
    .filter((r) => r.subject === subject)
    .map((r) => r.figures[name])
    .filter((x): x is number => x !== undefined && Number.isFinite(x));
  return xs.length === 0 ? undefined : Math.max(...xs);
}

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'not judged' : ok ? 'met' : 'NOT met';
}

/** A ratio goal's line: `what: B x, A y: B ÷ A = r (goal ≥ g): met`. */
function ratioLine(
  what: string,
  a: number | undefined,
  b: number | undefined,
  goal: string,
  ok: (r: number) => boolean,
): string {
  if (a === undefined || b === undefined)
    return `${what}: A ${a === undefined ? 'n/a' : fmt(a)}, B ${b === undefined ? 'n/a' : fmt(b)} (goal ${goal}): not judged`;
  const r = b / a;
  return `${what}: A ${fmt(a)}, B ${fmt(b)}, B ÷ A = ${fmt(r)} (goal ${goal}): ${verdict(ok(r))}`;
}

/** The goal lines of a `capstan bench cluster` run. */
export function clusterGoals(rows: readonly Row[]): string[] {
  const lines = [
    ratioLine(
      'time to every Deployment pod Running, s',
      figure(rows, A, 'Deployment of', 'time s'),
      figure(rows, B, 'Deployment of', 'time s'),
      'B ÷ A ≥ 3',
      (r) => r >= 3,
    ),
    ratioLine(
      'whole stack peak RSS, MiB',
      peak(rows, A, 'stack RSS MiB'),
      peak(rows, B, 'stack RSS MiB'),
      'B ÷ A ≥ 4',
      (r) => r >= 4,
    ),
  ];
  for (const s of [A, B]) {
    const p99 = peak(rows, s, 'start p99 ms');
    if (p99 !== undefined)
      lines.push(`${s}: worst pod start-up p99 ${fmt(p99)} ms (SLO ≤ 5,000 ms): ${verdict(p99 <= 5000)}`);
  }
  const idle = figure(rows, A, '', 'nodes CPU % of a core');
  if (idle !== undefined)
    lines.push(`${A}: idle simulated nodes ${fmt(idle)}% of one core (goal ≤ 5%): ${verdict(idle <= 5)}`);
  return lines;
}

/**
 * The line of a `--manager-ceiling` run: whether issue 29's pods/s goal is within reach of any
 * manager on this server and machine.
 */
function ceilingLine(rows: readonly Row[]): string {
  const ceiling = figure(rows, CEILING, '', 'pods/s');
  const kube = figure(rows, B, '', 'pods/s');
  const what = `pods created per second, ceiling (no manager, ${IN_FLIGHT} creates in flight) against kube`;
  if (ceiling === undefined || kube === undefined)
    return `${what}: A ${ceiling === undefined ? 'n/a' : fmt(ceiling)}, B ${kube === undefined ? 'n/a' : fmt(kube)}: not judged`;
  const r = ceiling / kube;
  return `${what}: A ${fmt(ceiling)}, B ${fmt(kube)}: no manager can exceed A ÷ B = ${fmt(r)}× kube's here (goal 2×): ${r >= 2 ? 'within reach' : 'out of reach'}`;
}

/** The goal lines of a `capstan bench controllers` run. */
export function controllerGoals(rows: readonly Row[]): string[] {
  if (rows.some((r) => r.subject === CEILING)) return [ceilingLine(rows)];
  return [
    ratioLine(
      'pods created per second',
      figure(rows, A, '', 'pods/s'),
      figure(rows, B, '', 'pods/s'),
      'A ÷ B ≥ 2, i.e. B ÷ A ≤ 0.5',
      (r) => r <= 0.5,
    ),
    ratioLine(
      'manager RSS holding the pods, MiB',
      figure(rows, A, '', 'manager RSS MiB'),
      figure(rows, B, '', 'manager RSS MiB'),
      'A ≤ ½ B, i.e. B ÷ A ≥ 2',
      (r) => r >= 2,
    ),
  ];
}
