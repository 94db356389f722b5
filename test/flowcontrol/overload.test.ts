/**
 * The overload proof: 2,000 concurrent requests against `--max-requests-inflight=50`
 * get only successes and 429s (with `Retry-After: 1`), the server's RSS stays bounded, and the
 * server serves normally afterwards — with APF (the default: the limit becomes 50 seats shared by
 * the priority levels, the flood's level queuing what its queues hold) and with
 * `--enable-priority-and-fairness=false` (the max-in-flight filter). `system:masters` is exempt
 * either way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flood } from '../support/flood.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { userTls } from '../support/users.js';

const PATH = '/api/v1/namespaces/default/configmaps';
/** RSS growth allowed during the flood (the test runner, clients and server share the process). */
const RSS_BOUND = 256 * 1024 * 1024;

describe.each([
  { mode: 'APF', args: [] as string[] },
  { mode: 'max-in-flight', args: ['--enable-priority-and-fairness=false'] },
])('2,000 concurrent requests against --max-requests-inflight=50 ($mode)', ({ mode, args }) => {
  let server: TestServer;
  let admin: AdminTls;
  let alice: AdminTls;
  beforeAll(async () => {
    server = await startTestServer({
      args: ['--max-requests-inflight=50', '--max-mutating-requests-inflight=0', ...args],
    });
    admin = adminTls(server.kubeconfigPath);
    alice = await userTls(server, 'alice');
  }, 60_000);
  afterAll(() => server?.close());

  it('answers only 200 or 429 with Retry-After, with bounded memory, then serves again', async () => {
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const results = await flood(server.url, alice, PATH, 2000).finally(() => clearInterval(sampler));
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    expect(ok + limited.length).toBe(2000);
    expect(ok).toBeGreaterThan(0);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.every((r) => r.retryAfter === '1')).toBe(true);
    expect(rssPeak - rssBefore).toBeLessThan(RSS_BOUND);
    for (let i = 0; i < 5; i++) {
      const res = await adminFetch(`${server.url}${PATH}`, alice);
      expect(res.status).toBe(200);
      // The PF headers come with APF only.
      expect(res.headers['x-kubernetes-pf-flowschema-uid'] !== undefined).toBe(mode === 'APF');
    }

    if (mode === 'APF') {
      const m = parsePrometheus((await adminFetch(`${server.url}/metrics`, admin)).body);
      const of = (family: string, labels: Record<string, string>) =>
        sampleValue(m, family, `${family}_total`, {
          priority_level: 'global-default',
          flow_schema: 'global-default',
          ...labels,
        }) ?? 0;
      // Refused because the flow's queues were full (or, on a crawling machine, waited too long).
      const rejected = (reason: string) => of('apiserver_flowcontrol_rejected_requests', { reason });
      expect(rejected('queue-full') + rejected('time-out')).toBe(limited.length);
      expect(rejected('queue-full')).toBeGreaterThan(0);
      expect(of('apiserver_flowcontrol_dispatched_requests', {})).toBeGreaterThanOrEqual(ok);
    }
  });

  it('never limits system:masters', async () => {
    const results = await flood(server.url, admin, PATH, 2000);
    expect(results.every((r) => r.status === 200)).toBe(true);
  });
});
