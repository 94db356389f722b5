/**
 * How `capstan bench` names what it measures: product and version from the server's own
 * `/version`, the backend from how the server process was started, never a fixed "capstan".
 */
import { createServer as createH2Server, type Http2Server } from 'node:http2';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchClient } from '../../src/bench/client.js';
import { FlagError } from '../../src/flags/flags.js';
import { bareServerArgs } from '../../src/bench/ha-planes.js';
import { parseBenchArgs } from '../../src/bench/options.js';
import { backendOfArgs, identifySubject, listeningPid, productOf } from '../../src/bench/subject.js';
import { cleartextCredentials } from '../support/cleartext.js';

/** A cleartext HTTP/2 server answering `/version` with `doc` (404 for anything else). */
function versionServer(doc: unknown): Promise<{ server: Http2Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createH2Server((req, res) => {
    hits++;
    if (req.url !== '/version') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({
        server,
        url: `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`,
        hits: () => hits,
      });
    }),
  );
}

let kube: { server: Http2Server; url: string; hits: () => number };
let capstan: { server: Http2Server; url: string; hits: () => number };

beforeAll(async () => {
  kube = await versionServer({ major: '1', minor: '33', gitVersion: 'v1.33.13', gitCommit: '0123abcd' });
  capstan = await versionServer({ gitVersion: 'v1.33.0+capstan', gitCommit: 'capstan-0.1.0' });
});
afterAll(() => {
  kube.server.close();
  capstan.server.close();
});

describe('subject labels', () => {
  it('take product and version from /version', async () => {
    const client = new BenchClient(cleartextCredentials(kube.url), 1);
    try {
      const id = await identifySubject(client, {});
      expect(id.product).toBe('kube-apiserver');
      expect(id.version).toBe('v1.33.13');
      // The listening process is this test runner, not a server: its backend is not guessed.
      expect(id.backend).toBe('backend unknown');
      expect(id.pid).toBeUndefined();
      expect(id.label).toBe('kube-apiserver v1.33.13 (backend unknown)');
    } finally {
      client.close();
    }
  });

  it('name a server the bench started by the flags it started it with', async () => {
    const client = new BenchClient(cleartextCredentials(capstan.url), 1);
    try {
      const leveldb = await identifySubject(client, { spawnedArgs: [], pid: 4242 });
      expect(leveldb.label).toBe('capstan v1.33.0+capstan (embedded LevelDB)');
      expect(leveldb.pid).toBe(4242);
      const etcd = await identifySubject(client, { spawnedArgs: ['--etcd-servers=http://127.0.0.1:2379'] });
      expect(etcd.label).toBe('capstan v1.33.0+capstan (etcd)');
    } finally {
      client.close();
    }
  });

  it('say so when /version does not answer', async () => {
    const client = new BenchClient(cleartextCredentials('http://127.0.0.1:1'), 1);
    try {
      expect((await identifySubject(client, {})).label).toBe('server unknown version (backend unknown)');
    } finally {
      client.close();
    }
    expect(productOf({ gitVersion: 'something' })).toEqual({ product: 'server', version: 'something' });
  });

  it('read the backend from a server command line', () => {
    const kubeArgs = [
      '/work/ref/bin/kube-apiserver',
      '--etcd-servers=http://127.0.0.1:2379',
      '--secure-port=6443',
    ];
    expect(backendOfArgs(kubeArgs)).toBe('etcd');
    expect(backendOfArgs(['/ref/kube-apiserver-versioned', '--etcd-servers=http://e:2379'])).toBe('etcd');
    expect(backendOfArgs(['/ref/kube-apiserver.d/other', '--etcd-servers=http://e:2379'])).toBeUndefined();
    expect(backendOfArgs(['node', '/x/dist/src/cli/main.js', 'server', '--data-dir=/d'])).toBe(
      'embedded LevelDB',
    );
    expect(backendOfArgs(['capstan', 'server', '--etcd-servers', 'http://e:2379'])).toBe('etcd');
    expect(
      backendOfArgs(['node', '/x/dist/bundle/capstan.js', 'server', '--etcd-servers=http://e:2379']),
    ).toBe('etcd');
    expect(backendOfArgs(['node', '/x/vitest.mjs', 'run'])).toBeUndefined();
  });

  it('find the local process listening on a port', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const a = server.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      expect(listeningPid(port)).toBe(process.pid);
    } finally {
      server.close();
    }
  });
});

describe('a client of several servers (an HA control plane)', () => {
  it('sends successive requests round-robin to each server', async () => {
    const client = new BenchClient([cleartextCredentials(kube.url), cleartextCredentials(capstan.url)], 2);
    const before = [kube.hits(), capstan.hits()];
    try {
      expect(client.origins).toEqual([kube.url, capstan.url]);
      for (let i = 0; i < 10; i++) expect((await client.request('GET', '/version')).status).toBe(200);
      expect([kube.hits() - before[0]!, capstan.hits() - before[1]!]).toEqual([5, 5]);
    } finally {
      client.close();
    }
  });

  it('names the server that failed', async () => {
    const client = new BenchClient(
      [cleartextCredentials(kube.url), cleartextCredentials('http://127.0.0.1:1')],
      1,
    );
    try {
      await client.request('GET', '/version');
      await expect(client.request('GET', '/version')).rejects.toThrow(
        /cannot reach http:\/\/127\.0\.0\.1:1\b/,
      );
    } finally {
      client.close();
    }
  });
});

describe('flags of an HA comparison', () => {
  it('take a kubeconfig per server, or start both control planes with --ha-compare', () => {
    const listed = parseBenchArgs(['--kubeconfig=a.kubeconfig,b.kubeconfig', '--compare=c.kubeconfig']);
    expect(listed?.kubeconfig).toEqual(['a.kubeconfig', 'b.kubeconfig']);
    expect(listed?.compare?.kubeconfig).toEqual(['c.kubeconfig']);
    const ha = parseBenchArgs(['create', '--ha-compare=/ref/bin', '--server-arg=--v=2']);
    expect(ha?.ha).toEqual({ kubeBinDir: '/ref/bin', servers: 3 });
    expect(ha?.rounds).toBe(3);
    expect(ha?.serverArgs).toEqual(['--v=2']);
    expect(() => parseBenchArgs(['--ha-compare=/ref/bin', '--compare=c.kubeconfig'])).toThrow(FlagError);
    expect(() => parseBenchArgs(['--ha-compare=/ref/bin', '--ha-servers=0'])).toThrow(FlagError);
    expect(() => parseBenchArgs(['--kubeconfig=a.kubeconfig,'])).toThrow(/empty kubeconfig path/);
    expect(() => parseBenchArgs(['--warmup-rounds=-1'])).toThrow(FlagError);
  });

  it("run Capstan's servers bare, as kube-apiserver runs, unless a --server-arg names --controllers", () => {
    expect(bareServerArgs([])).toEqual(['--controllers=']);
    expect(bareServerArgs(['--v=2'])).toEqual(['--controllers=', '--v=2']);
    expect(bareServerArgs(['--controllers=*'])).toEqual(['--controllers=*']);
    expect(bareServerArgs(['--controllers', '-scheduler'])).toEqual(['--controllers', '-scheduler']);
  });
});
