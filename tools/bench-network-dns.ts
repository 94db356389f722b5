/**
 * A DNS load client for bench-network.ts: A queries for random names from a list over one UDP
 * socket, a fixed number outstanding, each lost after 2 s; the figures are answers per second
 * over the whole run and latency percentiles of the answered queries.
 */
import { createSocket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';

/** What a run measured. */
export interface LoadResult {
  readonly sent: number;
  readonly answered: number;
  readonly qps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Sends `count` queries to `host`:`port`, `outstanding` at a time. */
export function queryLoad(
  host: string,
  port: number,
  names: readonly string[],
  count: number,
  outstanding: number,
): Promise<LoadResult> {
  const socket = createSocket('udp4');
  const started = new Map<number, { at: bigint; timer: NodeJS.Timeout }>();
  const latencies: number[] = [];
  let sent = 0;
  let nextId = 1;
  const t0 = process.hrtime.bigint();
  return new Promise((resolve) => {
    const finish = (): void => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      socket.close();
      latencies.sort((a, b) => a - b);
      const pct = (p: number): number =>
        latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
      resolve({
        sent,
        answered: latencies.length,
        qps: latencies.length / seconds,
        p50Ms: pct(0.5),
        p99Ms: pct(0.99),
      });
    };
    const settle = (): void => {
      if (sent < count) send();
      else if (started.size === 0) finish();
    };
    const send = (): void => {
      const id = nextId;
      nextId = (nextId % 65535) + 1;
      const name = names[Math.floor(Math.random() * names.length)] ?? '';
      const msg = dnsPacket.encode({
        type: 'query',
        id,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type: 'A', name }],
      });
      sent++;
      const timer = setTimeout(() => {
        started.delete(id);
        settle();
      }, 2000);
      started.set(id, { at: process.hrtime.bigint(), timer });
      socket.send(msg, port, host);
    };
    socket.on('message', (msg) => {
      if (msg.length < 12) return;
      const q = started.get(msg.readUInt16BE(0));
      if (q === undefined) return;
      clearTimeout(q.timer);
      started.delete(msg.readUInt16BE(0));
      latencies.push(Number(process.hrtime.bigint() - q.at) / 1e6);
      settle();
    });
    socket.bind(0, '127.0.0.1', () => {
      for (let i = 0; i < Math.min(outstanding, count); i++) send();
    });
  });
}
