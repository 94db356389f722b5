/**
 * Runs one probe of one container, as kubelet's prober does: the handler (exec through CRI
 * ExecSync with the probe's timeout, httpGet, tcpSocket, grpc) tried up to 3 times while it
 * errors, and an `Unhealthy` Warning event on the container when it fails
 * (`Liveness probe failed: <output>`) or errors (`... probe errored and resulted in unknown
 * state: <error>`); a warning (a redirect not followed) gets a `ProbeWarning` event.
 */
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Container, Pod, Probe } from '../../api/types/core-v1.js';
import { CriError, type CriClient } from '../cri/client.js';
import { expandVars } from '../runtime/env.js';
import { containerFieldPath, Reasons, type EventSink } from '../pod/events.js';
import { grpcProbe } from './grpc.js';
import { httpGetRequest, httpProbe } from './http.js';
import { dialErrorText, joinHostPort } from './net-errors.js';
import { ProbeError, resolveContainerPort, type ProbeOutcome } from './types.js';

/** The three kinds of probe. */
export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** What one probe run needs. */
export interface ProbeTarget {
  readonly pod: Pod;
  readonly container: Container;
  readonly containerId: string;
  readonly podIP: string;
}

/** kube's output limit for exec probes (10 KiB). */
const MAX_EXEC_OUTPUT = 10 * 1024;
const RETRIES = 3;

/** "Liveness", "Readiness", "Startup": how events name a probe. */
export function probeTypeName(type: ProbeType): string {
  return type[0]?.toUpperCase() + type.slice(1);
}

/** The command with `$(VAR)` expanded from the container's literal env values only (as kube). */
export function staticCommand(command: readonly string[], container: Container): string[] {
  const vars = new Map<string, string>();
  for (const e of container.env ?? [])
    if (e.name && e.value !== undefined && !e.valueFrom) vars.set(e.name, e.value);
  return command.map((c) => expandVars(c, vars));
}

/** Runs a command in a container through CRI within `timeoutSeconds` (0: no limit). */
export async function execInContainer(
  cri: CriClient,
  containerId: string,
  cmd: string[],
  timeoutSeconds: number,
): Promise<{ exitCode: number; output: string }> {
  const r = await cri.execSync(containerId, cmd, timeoutSeconds);
  const output = Buffer.concat([Buffer.from(r.stdout ?? ''), Buffer.from(r.stderr ?? '')]);
  return { exitCode: r.exitCode, output: output.subarray(0, MAX_EXEC_OUTPUT).toString('utf8') };
}

function tcpProbe(host: string, port: number, timeoutSeconds: number): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ result: 'failure', output: dialErrorText({ code: 'PROBE_TIMEOUT' }, addr) });
    }, timeoutSeconds * 1000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ result: 'success', output: '' });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      resolve({ result: 'failure', output: dialErrorText(err, addr) });
    });
  });
}

/** Runs a probe's handler once; throws a ProbeError when it cannot run. */
export async function runProbeOnce(cri: CriClient, probe: Probe, t: ProbeTarget): Promise<ProbeOutcome> {
  const timeout = probe.timeoutSeconds ?? 1;
  if (probe.exec) {
    const cmd = staticCommand(probe.exec.command ?? [], t.container);
    const timedOut: ProbeOutcome = { result: 'failure', output: `command "${cmd.join(' ')}" timed out` };
    // kubelet's call ends at the timeout itself (the runtime's own answer comes later).
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<ProbeOutcome>(
      (resolve) => (timer = setTimeout(() => resolve(timedOut), timeout * 1000)),
    );
    try {
      const run = execInContainer(cri, t.containerId, cmd, timeout).then((r): ProbeOutcome => ({
        result: r.exitCode === 0 ? 'success' : 'failure',
        output: r.output,
      }));
      run.catch(() => undefined); // answered after the deadline: nobody waits any more
      return await Promise.race([run, deadline]);
    } catch (err) {
      if (err instanceof CriError && err.code === grpc.status.DEADLINE_EXCEEDED) return timedOut;
      throw new ProbeError(err instanceof Error ? err.message : String(err), { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }
  if (probe.httpGet) {
    return httpProbe(httpGetRequest(probe.httpGet, t.container, t.podIP, 'probe'), timeout * 1000);
  }
  if (probe.tcpSocket) {
    const port = resolveContainerPort(probe.tcpSocket.port, t.container);
    return tcpProbe(probe.tcpSocket.host || t.podIP, port, timeout);
  }
  if (probe.grpc) {
    return grpcProbe(t.podIP, probe.grpc.port ?? 0, probe.grpc.service ?? '', timeout);
  }
  const pod = t.pod.metadata;
  throw new ProbeError(
    `missing probe handler for ${pod.name ?? ''}_${pod.namespace ?? ''}(${pod.uid ?? ''}):${t.container.name ?? ''}`,
  );
}

/**
 * Runs a probe (retrying while it errors) and records kube's events. Answers true for success
 * (warnings included), false for failure, undefined when it errored (a result to throw away).
 */
export async function runProbe(
  cri: CriClient,
  events: EventSink,
  type: ProbeType,
  probe: Probe,
  t: ProbeTarget,
): Promise<boolean | undefined> {
  let outcome: ProbeOutcome | undefined;
  let error: unknown;
  for (let i = 0; i < RETRIES; i++) {
    try {
      outcome = await runProbeOnce(cri, probe, t);
      error = undefined;
      break;
    } catch (err) {
      error = err;
    }
  }
  const fieldPath = containerFieldPath(t.pod, t.container.name ?? '');
  const name = probeTypeName(type);
  if (!outcome) {
    const text = error instanceof Error ? error.message : String(error);
    events.event(
      t.pod,
      'Warning',
      Reasons.Unhealthy,
      `${name} probe errored and resulted in unknown state: ${text}`,
      fieldPath,
    );
    return undefined;
  }
  if (outcome.result === 'failure') {
    events.event(t.pod, 'Warning', Reasons.Unhealthy, `${name} probe failed: ${outcome.output}`, fieldPath);
    return false;
  }
  if (outcome.result === 'warning') {
    events.event(
      t.pod,
      'Warning',
      Reasons.ProbeWarning,
      `${name} probe warning: ${outcome.output}`,
      fieldPath,
    );
  }
  return true;
}
