/**
 * kube's gRPC probe: `grpc.health.v1.Health/Check` on the pod IP and port, plaintext, with the
 * service name of the probe (default ""), within the timeout; SERVING succeeds, any other
 * status, an unimplemented service, a failed connection or a timeout fails with kube's texts.
 *
 * The two messages are encoded by hand (field 1 of each: a string, an enum), which avoids a
 * .proto file for two fields.
 */
import * as grpc from '@grpc/grpc-js';
import { goDuration, joinHostPort } from './net-errors.js';
import { KUBE_VERSION, type ProbeOutcome } from './types.js';

const STATUSES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

function encodeRequest(service: string): Buffer {
  const name = Buffer.from(service, 'utf8');
  if (name.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  let n = name.length;
  while (n > 0x7f) {
    len.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  len.push(n);
  return Buffer.concat([Buffer.from([0x0a, ...len]), name]);
}

/** The `status` (field 1, varint) of a HealthCheckResponse; 0 when absent. */
function decodeStatus(buf: Buffer): number {
  let i = 0;
  let status = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++] ?? 0;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80 || i >= buf.length) return v;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const wire = key & 7;
    if (key >>> 3 === 1 && wire === 0) status = varint();
    else if (wire === 0) varint();
    else if (wire === 2) i += varint();
    else if (wire === 5) i += 4;
    else if (wire === 1) i += 8;
    else break;
  }
  return status;
}

/** Probes `host:port` for `service` within `timeoutSeconds`. */
export async function grpcProbe(
  host: string,
  port: number,
  service: string,
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const deadline = Date.now() + timeoutSeconds * 1000;
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': `kube-probe/${KUBE_VERSION}`,
  });
  try {
    const connected = await new Promise<Error | undefined>((resolve) =>
      client.waitForReady(deadline, (err) => resolve(err ?? undefined)),
    );
    if (connected) {
      return {
        result: 'failure',
        output: `timeout: failed to connect service "${addr}" within ${goDuration(timeoutSeconds)}: context deadline exceeded`,
      };
    }
    const answer = await new Promise<{ status?: number; error?: grpc.ServiceError }>((resolve) => {
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (arg: string) => encodeRequest(arg),
        (buf: Buffer) => decodeStatus(buf),
        service,
        new grpc.Metadata(),
        { deadline },
        (error, status) => resolve(error ? { error } : { status: status ?? 0 }),
      );
    });
    if (answer.error) {
      const e = answer.error;
      if (e.code === grpc.status.UNIMPLEMENTED) {
        return {
          result: 'failure',
          output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}`,
        };
      }
      if (e.code === grpc.status.DEADLINE_EXCEEDED) {
        return {
          result: 'failure',
          output: `timeout: health rpc did not complete within ${goDuration(timeoutSeconds)}`,
        };
      }
      return {
        result: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${grpcCodeName(e.code)} desc = ${e.details}`,
      };
    }
    if (answer.status !== 1) {
      const name = STATUSES[answer.status ?? 0] ?? String(answer.status);
      return { result: 'failure', output: `service unhealthy (responded with "${name}")` };
    }
    return { result: 'success', output: 'service healthy' };
  } finally {
    client.close();
  }
}

/** gRPC-Go's code names (`NotFound`, `Unavailable`...). */
function grpcCodeName(code: grpc.status): string {
  const name = grpc.status[code] ?? String(code);
  return name
    .toLowerCase()
    .split('_')
    .map((p) => (p ? p[0]?.toUpperCase() + p.slice(1) : p))
    .join('');
}
