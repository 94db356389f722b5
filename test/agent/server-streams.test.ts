/**
 * The agent's `/portForward/{namespace}/{pod}` on its HTTPS API, without a runtime: a fake CRI
 * answers PortForward with the URL of a fake streaming server, which switches protocols and
 * echoes. The upgrade reaches that URL with the client's protocol headers, bytes pass both ways
 * unchanged, the pod's sandbox and the `port` list reach CRI; an unknown pod is 404, a request
 * without an upgrade 400, and with `--enable-debugging-handlers=false` everything streaming 404.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CriClient } from '../../src/agent/cri/client.js';
import { servingCertificate } from '../../src/agent/serving-cert.js';
import { startAgentServer, type AgentServers } from '../../src/agent/server/server.js';

interface Exchange {
  readonly head: string;
  readonly reply: Buffer;
}

/** Sends `head` (+ `data` once switched) over TLS to `port`; answers what came back within 500 ms. */
function exchange(port: number, head: string, data = ''): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => socket.write(head));
    let reply = Buffer.alloc(0);
    let sent = false;
    socket.on('data', (d: Buffer) => {
      reply = Buffer.concat([reply, d]);
      if (!sent && data !== '' && reply.includes('\r\n\r\n')) {
        sent = true;
        socket.write(data);
      }
    });
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      const text = reply.toString('latin1');
      resolve({ head: text.slice(0, text.indexOf('\r\n\r\n') + 4), reply });
    }, 500);
  });
}

const upgrade = (path: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: node\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n` +
  'X-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n';

describe("the agent's /portForward", () => {
  let dir: string;
  let runtimeStream: Server;
  let streamHeads: string[];
  const forwards: { sandbox: string; ports: number[] }[] = [];
  const servers: AgentServers[] = [];
  let on: AgentServers;
  let off: AgentServers;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-agent-pf-'));
    streamHeads = [];
    // The runtime's streaming server: records the request, switches, echoes.
    runtimeStream = createServer((socket: Socket) => {
      let buf = Buffer.alloc(0);
      let switched = false;
      socket.on('data', (d: Buffer) => {
        if (switched) {
          socket.write(d);
          return;
        }
        buf = Buffer.concat([buf, d]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        switched = true;
        streamHeads.push(buf.subarray(0, end).toString('latin1'));
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
            'X-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n',
        );
        if (buf.length > end + 4) socket.write(buf.subarray(end + 4));
      });
    });
    await new Promise<void>((resolve) => runtimeStream.listen(0, '127.0.0.1', resolve));
    const address = runtimeStream.address();
    const streamPort = typeof address === 'object' && address ? address.port : 0;
    const cri = {
      portForward: (sandbox: string, ports: number[] = []) => {
        forwards.push({ sandbox, ports });
        return Promise.resolve(`http://127.0.0.1:${streamPort}/portforward/TOKEN`);
      },
    } as unknown as CriClient;
    const { cert, key } = await servingCertificate({
      certFile: '',
      keyFile: '',
      certDir: dir,
      nodeName: 'n1',
      nodeIP: '127.0.0.1',
    });
    const start = (debuggingHandlers: boolean): Promise<AgentServers> =>
      startAgentServer(
        {
          pods: () => [],
          containers: () => Promise.resolve(undefined),
          sandbox: (ns, pod) => Promise.resolve(ns === 'default' && pod === 'web' ? 'sandbox-1' : undefined),
          cri,
        },
        {
          address: '127.0.0.1',
          port: 0,
          cert,
          key,
          debuggingHandlers,
          auth: { anonymous: true, clientCA: false, mode: 'AlwaysAllow', nodeName: 'n1' },
        },
      );
    on = await start(true);
    off = await start(false);
    servers.push(on, off);
  });

  afterAll(async () => {
    for (const s of servers) await s.close();
    await new Promise<void>((resolve) => runtimeStream?.close(() => resolve()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("proxies the upgrade to the runtime's streaming URL, byte for byte", async () => {
    const res = await exchange(on.port, upgrade('/portForward/default/web?port=8080,9090'), 'spdy-bytes');
    expect(res.head).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(res.head).toContain('X-Stream-Protocol-Version: portforward.k8s.io');
    expect(res.reply.subarray(res.head.length).toString()).toBe('spdy-bytes');
    expect(forwards).toContainEqual({ sandbox: 'sandbox-1', ports: [8080, 9090] });
    const head = streamHeads.at(-1) ?? '';
    expect(head).toMatch(/^POST \/portforward\/TOKEN HTTP\/1\.1\r\n/);
    expect(head).toContain('X-Stream-Protocol-Version: portforward.k8s.io');
    expect(head).toContain('Upgrade: SPDY/3.1');
  });

  it('answers 404 for a pod it does not run, 400 for a bad port and without an upgrade', async () => {
    expect((await exchange(on.port, upgrade('/portForward/default/ghost'))).head).toMatch(/^HTTP\/1\.1 404 /);
    expect((await exchange(on.port, upgrade('/portForward/default/web?port=http'))).head).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    const plain = await exchange(on.port, 'POST /portForward/default/web HTTP/1.1\r\nHost: n\r\n\r\n');
    expect(plain.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(plain.reply.toString()).toContain('Upgrade request required');
  });

  it('is not there with --enable-debugging-handlers=false (404)', async () => {
    const before = forwards.length;
    expect((await exchange(off.port, upgrade('/portForward/default/web'))).head).toMatch(/^HTTP\/1\.1 404 /);
    expect(
      (await exchange(off.port, 'POST /portForward/default/web HTTP/1.1\r\nHost: n\r\n\r\n')).head,
    ).toMatch(/^HTTP\/1\.1 404 /);
    expect(forwards.length).toBe(before);
  });
});
