/**
 * Parses a Prometheus text exposition with the official Python client's parser
 * (`prometheus_client.parser`, Debian's python3-prometheus-client, installed by tools/test.sh):
 * an independent, strict reader of the format, so a malformed line fails the test.
 */
import { execFileSync } from 'node:child_process';

/** One sample: its full name (`x_bucket`, `x_count`, ...), labels and value. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One metric family. */
export interface PromFamily {
  readonly name: string;
  readonly type: string;
  readonly samples: readonly PromSample[];
}

const SCRIPT = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "samples": [
        {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
print(json.dumps(out))
`;

/** The families of `text`, keyed by family name (histograms under their base name). */
export function parsePrometheus(text: string): Map<string, PromFamily> {
  const json = execFileSync('/usr/bin/python3', ['-c', SCRIPT], { input: text, encoding: 'utf8' });
  const families = JSON.parse(json) as PromFamily[];
  return new Map(families.map((f) => [f.name, f]));
}

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(
  families: Map<string, PromFamily>,
  family: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const f = families.get(family);
  return f?.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}
