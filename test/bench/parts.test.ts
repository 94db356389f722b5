import { describe, expect, it } from 'vitest';
import { jsonConfigMaps, protobufConfigMaps, updateTarget } from '../../src/bench/objects.js';
import { parseProc } from '../../src/bench/proc.js';
import { markdownReport, textTables, type RunReport } from '../../src/bench/report.js';
import { EventScanner } from '../../src/bench/scenarios/watch.js';
import { checkTargets } from '../../src/bench/targets.js';

const run = (opsPerSec: number, startedAt: string): RunReport => ({
  startedAt,
  command: 'capstan bench crud',
  node: 'v20',
  target: 't',
  rows: [
    {
      scenario: 'create',
      case: '1 clients',
      subject: 'capstan',
      figures: { 'ops/s': opsPerSec, 'p99 ms': 2.5 },
      ratios: [{ to: 'raw put', value: 0.5 }],
    },
    { scenario: 'create', case: '1 clients', subject: 'raw put', figures: { 'ops/s': opsPerSec * 2 } },
  ],
});

describe('bench report', () => {
  it('shows the previous figures of the same row beside the new ones', () => {
    const md = markdownReport(run(1500, 'now'), run(1200, 'before'));
    expect(md).toContain('| 1 clients | capstan | 1,500 (1,200) | 2.50 (2.50) | 0.500 × raw put |');
    expect(md).toContain('| 1 clients | raw put | 3,000 (2,400) |  |  |');
    expect(md).toContain("previous report's (before)");
    expect(markdownReport(run(1500, 'now'))).toContain(
      '| 1 clients | capstan | 1,500 | 2.50 | 0.500 × raw put |',
    );
  });

  it('prints aligned text tables per scenario', () => {
    const text = textTables(run(1500, 'now').rows);
    expect(text.split('\n')[0]).toBe('== create');
    expect(text).toMatch(/capstan +1,500 +2\.50 +0\.500 × raw put/);
  });
});

describe('watch event scanner', () => {
  it('finds each event across chunk boundaries, once', () => {
    const seen: number[] = [];
    const s = new EventScanner((n) => seen.push(n));
    const events = [3, 14, 159].map(
      (n) => `{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"w-${n}","namespace":"x"}}}\n`,
    );
    const all = Buffer.from(events.join('') + '{"type":"BOOKMARK","object":{"metadata":{}}}\n');
    for (let i = 0; i < all.length; i += 7) s.push(all.subarray(i, i + 7));
    expect(seen).toEqual([3, 14, 159]);
  });
});

describe('/proc parsing', () => {
  it('reads CPU ticks after a command name with spaces and parentheses', () => {
    const stat = '42 (node (x) y) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0';
    const r = parseProc(stat, 'Name:\tnode\nVmRSS:\t  2048 kB\n');
    expect(r).toEqual({ cpuMs: 3000, rssBytes: 2048 * 1024 });
    expect(() => parseProc(stat, 'no rss')).toThrow();
  });
});

describe('request bodies', () => {
  it('JSON ConfigMaps are valid JSON with the chosen payload size', () => {
    const b = JSON.parse(jsonConfigMaps(1024).body('a', 3).toString()) as {
      metadata: { name: string };
      data: { payload: string };
    };
    expect(b.metadata.name).toBe('a');
    expect(b.data.payload).toHaveLength(1024);
    expect(b.data.payload[0]).toBe('3');
  });

  it('protobuf ConfigMaps carry the k8s envelope and the length-prefixed fields', () => {
    const b = protobufConfigMaps(200).body('abc');
    expect([...b.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
    // Unknown.typeMeta (field 1, wire type 2) then its apiVersion "v1".
    expect(b[4]).toBe(0x0a);
    expect(b.subarray(6, 10).toString('latin1')).toBe('\n\u0002v1');
    expect(b.includes(Buffer.from('\n\u0003abc'))).toBe(true);
    // The 200-byte payload needs a two-byte length varint (200 = 0xc8 0x01).
    expect(b.includes(Buffer.from([0x12, 0xc8, 0x01]))).toBe(true);
  });

  it('every update body differs from the last body of its object, whatever the object count', () => {
    const bodies = jsonConfigMaps(16);
    // 100 is the fixed fill; counts that are multiples of 10 once made every later update a no-op.
    for (const created of [1, 3, 10, 100, 137]) {
      const last = new Map<number, string>();
      for (let n = 0; n < created * 25; n++) {
        const { index, generation } = updateTarget(n, created);
        expect(index).toBe(n % created);
        const body = bodies.body(`c-${index}`, generation).toString();
        expect(body, `update ${n} of ${created}`).not.toBe(
          last.get(index) ?? bodies.body(`c-${index}`).toString(),
        );
        last.set(index, body);
      }
    }
  });
});

describe('target checks', () => {
  it('judges only rows at the target size', () => {
    const checks = checkTargets([
      {
        scenario: 'create',
        case: '100 clients, JSON',
        subject: 'capstan',
        figures: { 'ops/s': 1 },
        ratios: [{ to: 'raw classic-level batch of 100', value: 0.6 }],
      },
      {
        scenario: 'startup',
        case: 'fresh data dir',
        subject: 'capstan',
        figures: { 'first request ms': 400, 'idle RSS MiB': 70 },
      },
      { scenario: 'list', case: '10,000 objects, RV=0', subject: 'capstan', figures: { 'time ms': 10 } },
    ]);
    const verdict = (prefix: string): string | undefined =>
      checks.find((c) => c.target.startsWith(prefix))?.verdict;
    expect(verdict('creates')).toBe('met');
    expect(verdict('idle RSS')).toBe('met');
    expect(verdict('start to first request ≤ 300 ms')).toBe('missed');
    expect(verdict('LIST 100,000')).toBe('not measured');
    expect(checks.find((c) => c.target.startsWith('creates'))?.measured).toBe('60%');
  });
});
