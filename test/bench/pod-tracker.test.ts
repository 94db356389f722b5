/**
 * The cluster bench's pod watch, against a cleartext HTTP/2 server that ends each watch as
 * kube-apiserver ends one that falls behind: it resumes from the last resourceVersion and misses
 * nothing, and when resuming is refused its start-up figures are withheld, with the reason.
 */
import { createServer, type Http2Server, type Http2ServerResponse } from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { BenchClient } from '../../src/bench/client.js';
import { PodTracker } from '../../src/bench/cluster/watch.js';
import { cleartextCredentials } from '../support/cleartext.js';

const pod = (name: string, rv: number, phase: string): string =>
  `${JSON.stringify({ metadata: { name, resourceVersion: String(rv) }, status: { phase } })}`;
const event = (type: string, object: string): string => `{"type":"${type}","object":${object}}\n`;

/** Answers the n-th watch request (0-based) with `answer(n, res)`. */
function watchServer(
  answer: (n: number, res: Http2ServerResponse) => void,
): Promise<{ server: Http2Server; url: string; urls: string[] }> {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    urls.push(req.url);
    res.writeHead(200, { 'content-type': 'application/json' });
    answer(urls.length - 1, res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`, urls });
    }),
  );
}

const until = async (ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
};

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

/** A pod tracker on a server answering its watches with `answer`; both closed after the test. */
async function tracked(
  answer: (n: number, res: Http2ServerResponse) => void,
): Promise<{ tracker: PodTracker; srv: { urls: string[] } }> {
  const srv = await watchServer(answer);
  const client = new BenchClient(cleartextCredentials(srv.url), 1);
  const tracker = await PodTracker.open(client, 'ns');
  cleanup.push(
    () => tracker.close(),
    () => client.close(),
    () => srv.server.close(),
  );
  return { tracker, srv };
}

describe('the cluster bench pod watch', () => {
  it('resumes from the last resourceVersion when the server ends it, missing nothing', async () => {
    const since = process.hrtime.bigint();
    const { tracker, srv } = await tracked((n, res) => {
      if (n === 0) {
        res.write(event('ADDED', pod('a', 5, 'Pending')));
        res.end(event('MODIFIED', pod('a', 7, 'Running')));
      } else res.write(event('ADDED', pod('b', 9, 'Running')));
    });
    await until(() => tracker.running === 2);
    expect(tracker.running).toBe(2);
    expect(srv.urls).toEqual([
      '/api/v1/namespaces/ns/pods?watch=true&allowWatchBookmarks=false',
      '/api/v1/namespaces/ns/pods?watch=true&allowWatchBookmarks=false&resourceVersion=7',
    ]);
    expect(tracker.note).toBe('pod watch resumed 1 time(s)');
    const result = tracker.stepResult(since);
    expect(result.startups).toHaveLength(2);
    expect(result.note).toBe('pod watch resumed 1 time(s)');
  });

  it('withholds the start-up figures, saying why, when resuming is refused', async () => {
    const gone = JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    const { tracker, srv } = await tracked((n, res) => {
      if (n === 0) res.end(event('ADDED', pod('a', 5, 'Running')));
      else res.end(event('ERROR', gone));
    });
    await until(() => tracker.note?.startsWith('pod watch incomplete') === true);
    expect(tracker.note).toMatch(/^pod watch incomplete \(an ERROR event: .*"code":410/);
    const result = tracker.stepResult(process.hrtime.bigint());
    expect(result.startups).toBeUndefined();
    // Stopped: no third watch.
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.urls).toHaveLength(2);
  });
});
