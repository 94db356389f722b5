/**
 * The Prometheus text format (0.0.4) as kube's component-base writes it: families sorted by name,
 * `# HELP` prefixed by the stability level (`[STABLE]`, `[ALPHA]`) and a deprecation note,
 * labels sorted by name, values in Go's shortest `%g` form, optional millisecond timestamps.
 */

/** One sample of a family. */
export interface Sample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
  /** Epoch milliseconds. */
  readonly timestampMs?: number;
}

/** A metric family. */
export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly stability: 'STABLE' | 'ALPHA' | 'BETA';
  /** The kube version that deprecated the metric (shown in its help). */
  readonly deprecatedVersion?: string;
  readonly samples: readonly Sample[];
}

/** The text exposition's content type. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** A number as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it (`5.587546112e+09`, `0.25`). */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mant = '', e = '0'] = v.toExponential().split('e');
  const exp = Number(e);
  // Shortest %g: exponent form when the exponent is below -4 or at least 6.
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Readonly<Record<string, string>> | undefined): string {
  if (!labels) return '';
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${escapeLabel(labels[k] ?? '')}"`).join(',')}}`;
}

/** Renders families (those without samples are left out, as client_golang does). */
export function renderFamilies(families: readonly Family[]): string {
  const out: string[] = [];
  for (const f of [...families].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (f.samples.length === 0) continue;
    const deprecated = f.deprecatedVersion ? `(Deprecated since ${f.deprecatedVersion}) ` : '';
    out.push(
      `# HELP ${f.name} [${f.stability}] ${deprecated}${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
    );
    out.push(`# TYPE ${f.name} ${f.type}`);
    const lines = f.samples.map(
      (s) =>
        `${f.name}${labelText(s.labels)} ${goFloat(s.value)}${s.timestampMs !== undefined ? ` ${Math.round(s.timestampMs)}` : ''}`,
    );
    out.push(...lines.sort());
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
