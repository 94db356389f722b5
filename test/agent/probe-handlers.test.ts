/**
 * The probe handlers against real servers on loopback: kube's HTTP probe (status ranges, its
 * headers, the redirect rule, timeouts and Go-worded errors), TCP, gRPC health checks, port
 * resolution by name, and the `Unhealthy` events of a probe run.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types/core-v1.js';
import type { CriClient } from '../../src/agent/cri/client.js';
import { grpcProbe } from '../../src/agent/probe/grpc.js';
import { httpGetRequest, httpProbe } from '../../src/agent/probe/http.js';
import { runProbe, runProbeOnce } from '../../src/agent/probe/prober.js';
import { ProbeError, resolveContainerPort } from '../../src/agent/probe/types.js';

const container: Container = { name: 'c', ports: [{ name: 'web', containerPort: 0 }] };
const noCri = {} as CriClient;

function listen(server: http.Server | net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

describe('HTTP probe', () => {
  let server: http.Server;
  let port: number;
  const seen: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      const url = new URL(req.url ?? '/', 'http://x');
      const code = Number(url.searchParams.get('code') ?? 200);
      if (url.pathname === '/slow') return; // never answers
      if (url.pathname === '/loop') {
        res.writeHead(302, { location: '/loop' }).end();
        return;
      }
      if (url.pathname === '/hop') {
        res.writeHead(301, { location: '/ok?code=200' }).end();
        return;
      }
      if (url.pathname === '/away') {
        res.writeHead(302, { location: 'http://localhost:1/elsewhere' }).end('moved away');
        return;
      }
      res.writeHead(code).end(`body-${code}`);
    });
    port = await listen(server);
    container.ports = [{ name: 'web', containerPort: port }];
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const req = (path: string, headers: { name: string; value: string }[] = []) =>
    httpGetRequest({ path, port: 'web', httpHeaders: headers }, container, '127.0.0.1', 'probe');

  it('succeeds on 200-399 and fails otherwise without the body', async () => {
    expect(await httpProbe(req('/ok?code=200'), 1000)).toEqual({ result: 'success', output: 'body-200' });
    expect(await httpProbe(req('/ok?code=399'), 1000)).toMatchObject({ result: 'warning' });
    expect(await httpProbe(req('/ok?code=404'), 1000)).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 404',
    });
    expect(await httpProbe(req('/ok?code=500'), 1000)).toMatchObject({ result: 'failure' });
  });

  it("sends kube's headers, the action's own, and its Host", async () => {
    seen.length = 0;
    await httpProbe(req('/ok'), 1000);
    expect(seen[0]?.['user-agent']).toBe('kube-probe/1.33');
    expect(seen[0]?.accept).toBe('*/*');
    seen.length = 0;
    await httpProbe(
      req('/ok', [
        { name: 'x-custom', value: 'a' },
        { name: 'Accept', value: '' },
        { name: 'host', value: 'example.test' },
        { name: 'User-Agent', value: 'mine' },
      ]),
      1000,
    );
    expect(seen[0]?.['x-custom']).toBe('a');
    expect(seen[0]?.accept).toBeUndefined();
    expect(seen[0]?.host).toBe('example.test');
    expect(seen[0]?.['user-agent']).toBe('mine');
    const hook = httpGetRequest({ path: '/ok', port }, container, '127.0.0.1', 'lifecycle');
    expect(hook.headers.get('User-Agent')).toEqual(['kube-lifecycle/1.33']);
  });

  it('follows redirects to the same host, not to another, and stops after 10', async () => {
    expect(await httpProbe(req('/hop'), 1000)).toEqual({ result: 'success', output: 'body-200' });
    expect(await httpProbe(req('/away'), 1000)).toEqual({
      result: 'warning',
      output: 'Probe terminated redirects, Response body: moved away',
    });
    expect(await httpProbe(req('/loop'), 2000)).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
    });
  });

  it("fails on a timeout and a refused connection with Go's words", async () => {
    expect(await httpProbe(req('/slow'), 300)).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
    const closed = net.createServer();
    const dead = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const r = httpGetRequest({ path: '/', port: dead }, container, '127.0.0.1', 'probe');
    expect(await httpProbe(r, 1000)).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${dead}/": dial tcp 127.0.0.1:${dead}: connect: connection refused`,
    });
  });
});

describe('HTTP probe leniency', () => {
  it("accepts header lines ending in a bare LF, as Go's client does", async () => {
    const raw = net.createServer((s) => s.end('HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nok'));
    const port = await listen(raw);
    const r = httpGetRequest({ path: '/', port }, container, '127.0.0.1', 'lifecycle');
    expect(await httpProbe(r, 0)).toEqual({ result: 'success', output: 'ok' });
    raw.close();
  });
});

describe('ports, TCP and the probe run', () => {
  it('resolves ports by number, name or numeric string, and refuses the rest', () => {
    const c: Container = { name: 'c', ports: [{ name: 'http', containerPort: 8080 }] };
    expect(resolveContainerPort(80, c)).toBe(80);
    expect(resolveContainerPort('http', c)).toBe(8080);
    expect(resolveContainerPort('9090', c)).toBe(9090);
    expect(() => resolveContainerPort('nope', c)).toThrow('strconv.Atoi: parsing "nope": invalid syntax');
    expect(() => resolveContainerPort(70000, c)).toThrow('invalid port number: 70000');
  });

  it('probes TCP and records Unhealthy events as kubelet words them', async () => {
    const server = net.createServer((s) => s.destroy());
    const port = await listen(server);
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u' },
      spec: { containers: [container] },
    };
    const t = {
      pod,
      container: { name: 'c', ports: [{ name: 'svc', containerPort: port }] },
      containerId: 'x',
      podIP: '127.0.0.1',
    };
    expect(await runProbeOnce(noCri, { tcpSocket: { port: 'svc' } }, t)).toEqual({
      result: 'success',
      output: '',
    });
    await new Promise<void>((r) => server.close(() => r()));
    const events: string[] = [];
    const sink = {
      event: (_p: Pod, type: string, reason: string, message: string, fieldPath?: string) =>
        events.push(`${type} ${reason} ${fieldPath ?? ''} ${message}`),
    };
    expect(await runProbe(noCri, sink, 'liveness', { tcpSocket: { port } }, t)).toBe(false);
    expect(await runProbe(noCri, sink, 'readiness', { tcpSocket: { port: 'missing' } }, t)).toBeUndefined();
    expect(events).toEqual([
      `Warning Unhealthy spec.containers{c} Liveness probe failed: dial tcp 127.0.0.1:${port}: connect: connection refused`,
      'Warning Unhealthy spec.containers{c} Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "missing": invalid syntax',
    ]);
    await expect(runProbeOnce(noCri, {}, t)).rejects.toBeInstanceOf(ProbeError);
  });
});

describe('gRPC probe', () => {
  let server: grpc.Server;
  let port: number;
  const statuses = new Map([
    ['', 1],
    ['down', 2],
  ]);

  beforeAll(async () => {
    server = new grpc.Server();
    const decodeService = (b: Buffer): string =>
      b.length > 2 && b[0] === 0x0a ? b.subarray(2, 2 + (b[1] ?? 0)).toString() : '';
    server.addService(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestSerialize: (x: Buffer) => x,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (x: Buffer) => x,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      {
        Check: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          const service = decodeService(call.request);
          const status = statuses.get(service);
          if (status === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
          else cb(null, Buffer.from([0x08, status]));
        },
      },
    );
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
  });
  afterAll(() => server.forceShutdown());

  it('checks grpc.health.v1 and fails with kube texts', async () => {
    expect(await grpcProbe('127.0.0.1', port, '', 2)).toEqual({
      result: 'success',
      output: 'service healthy',
    });
    expect(await grpcProbe('127.0.0.1', port, 'down', 2)).toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    expect(await grpcProbe('127.0.0.1', port, 'other', 2)).toEqual({
      result: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    });
    expect(await grpcProbe('127.0.0.1', 1, '', 1)).toEqual({
      result: 'failure',
      output: 'timeout: failed to connect service "127.0.0.1:1" within 1s: context deadline exceeded',
    });
  });
});
