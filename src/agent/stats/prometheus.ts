/**
 * The Prometheus text format (0.0.4) as kube's component-base writes it: families sorted by name,
 * `# HELP` prefixed by the stability level (`[STABLE]`, `[ALPHA]`) and a deprecation note,
 * labels sorted by name, values in Go's shortest `%g` form, optional millisecond timestamps.
 */
import { goFloat } from '../../api/go-format.js';

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
