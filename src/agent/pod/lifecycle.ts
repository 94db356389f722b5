/**
 * Container lifecycle hooks and the kill of one container, as kubelet does them:
 *
 * - `postStart` runs right after the container starts and the sync waits for it; when it fails,
 *   a `FailedPostStartHook` Warning event is recorded (without the hook's output, which may hold
 *   secrets), the container is killed, and its status waits with reason `PostStartHookError`
 *   and kube's message until the restart policy brings it back.
 * - {@link killContainer}: a `Killing` event, then `preStop` within the grace period (a failure
 *   is a `FailedPreStopHook` event; a hook that outlasts the grace period is left behind), then
 *   StopContainer with what is left of the grace period (at least 2 s unless the caller fixed
 *   it, as for a pod's deletion).
 *
 * Handlers: `exec` (CRI ExecSync), `httpGet` (any answer succeeds; an HTTPS hook answered in
 * plain HTTP is retried in HTTP with a `LifecycleHTTPFallback` event) and `sleep`.
 */
import type { Container, LifecycleHandler, Pod } from '../../api/types/core-v1.js';
import { execInContainer, staticCommand } from '../probe/prober.js';
import { HttpGetError, httpGet, httpGetRequest } from '../probe/http.js';
import type { ContainerHealth } from '../probe/manager.js';
import type { ContainerInstance, PodRuntime, PodRuntimeState } from '../runtime/runtime.js';
import { allContainers } from './containers.js';
import { containerFieldPath, Reasons, type EventSink } from './events.js';

/** What the hooks need of the sync's dependencies. */
export interface LifecycleDeps {
  readonly runtime: PodRuntime;
  readonly events: EventSink;
  readonly probes?: ContainerHealth;
}

/** The spec of a container name (init, app or ephemeral). */
export function containerSpec(pod: Pod, name: string): Container | undefined {
  return allContainers(pod).find((c) => c.name === name);
}

/** kubelet's floor of a kill's grace period when the caller did not fix it. */
const MIN_GRACE_SECONDS = 2;

function podName(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/** Go's %q of a string, close enough for hook output. */
function quote(s: string): string {
  return JSON.stringify(s);
}

/**
 * Runs one hook handler in a container; answers undefined on success, else kube's message
 * (`Exec lifecycle hook ([...]) for Container "c" in Pod "p_ns(uid)" failed - error: ...`).
 */
export async function runHook(
  deps: LifecycleDeps,
  pod: Pod,
  spec: Container,
  containerId: string,
  handler: LifecycleHandler,
  podIP: string,
): Promise<string | undefined> {
  const where = `for Container ${quote(spec.name ?? '')} in Pod ${quote(podName(pod))}`;
  if (handler.exec) {
    const cmd = staticCommand(handler.exec.command ?? [], spec);
    let error: string;
    let output = '';
    try {
      const r = await execInContainer(deps.runtime.cri, containerId, cmd, 0);
      if (r.exitCode === 0) return undefined;
      output = r.output;
      error = `command '${cmd.join(' ')}' exited with ${r.exitCode}: `;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    return `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} failed - error: ${error}, message: ${quote(output)}`;
  }
  if (handler.httpGet) {
    const action = handler.httpGet;
    const fail = (err: unknown): string =>
      `HTTP lifecycle hook (${action.path ?? ''}) ${where} failed - error: ${err instanceof Error ? err.message : String(err)}`;
    if (!action.host && !podIP) return fail(new Error('failed to find networking container'));
    try {
      const req = httpGetRequest(action, spec, podIP, 'lifecycle');
      try {
        await httpGet(req, 0);
      } catch (err) {
        if (!(err instanceof HttpGetError) || !err.plainHttpAnswer) throw err;
        const url = new URL(req.url);
        url.protocol = 'http:';
        const headers = new Map(req.headers);
        headers.delete('Authorization');
        await httpGet({ url, headers }, 0).catch(() => {
          throw err;
        });
        deps.events.event(
          pod,
          'Warning',
          Reasons.LifecycleHTTPFallback,
          `request to HTTPS lifecycle hook ${url.host} got HTTP response, retry with HTTP succeeded`,
        );
      }
      return undefined;
    } catch (err) {
      return fail(err);
    }
  }
  if (handler.sleep) {
    await new Promise((r) => setTimeout(r, (handler.sleep?.seconds ?? 0) * 1000));
    return undefined;
  }
  return `Cannot run handler: invalid handler: ${JSON.stringify(handler)}`;
}

/**
 * Runs a started container's postStart hook (if any). On failure: the event, the kill, and
 * kube's message answered for the container's waiting status.
 */
export async function runPostStart(
  deps: LifecycleDeps,
  pod: Pod,
  spec: Container,
  containerId: string,
  podIP: string,
): Promise<string | undefined> {
  const hook = spec.lifecycle?.postStart;
  if (!hook) return undefined;
  const msg = await runHook(deps, pod, spec, containerId, hook, podIP);
  if (msg === undefined) return undefined;
  console.error(`agent: postStart hook of ${podName(pod)}/${spec.name ?? ''}: ${msg}`);
  deps.events.event(
    pod,
    'Warning',
    Reasons.FailedPostStartHook,
    'PostStartHook failed',
    containerFieldPath(pod, spec.name ?? ''),
  );
  await killContainer(deps, pod, spec, { id: containerId, name: spec.name ?? '' }, podIP, {
    message: 'FailedPostStartHook',
  });
  return msg;
}

/** How a container is killed. */
export interface KillOptions {
  /** The Killing event's message (default `Stopping container <name>`). */
  readonly message?: string;
  /** Killed for failing this probe: its terminationGracePeriodSeconds applies. */
  readonly probe?: 'liveness' | 'startup';
  /** A grace period fixed by the caller (a pod's deletion): used as is. */
  readonly graceOverride?: number;
  /**
   * A sidecar's turn (kube's termination ordering): after its preStop hook, the stop waits for
   * this (the containers that stop before it) within what is left of the grace period.
   */
  readonly turn?: Promise<unknown>;
}

/** The grace period of a container's kill before its preStop hook (kube's rules). */
export function killGrace(pod: Pod, spec: Container | undefined, opts: KillOptions): number {
  if (opts.graceOverride !== undefined) return opts.graceOverride;
  if (pod.metadata.deletionGracePeriodSeconds !== undefined) return pod.metadata.deletionGracePeriodSeconds;
  const podGrace = pod.spec?.terminationGracePeriodSeconds;
  if (podGrace === undefined) return MIN_GRACE_SECONDS;
  const probe =
    opts.probe === 'liveness'
      ? spec?.livenessProbe
      : opts.probe === 'startup'
        ? spec?.startupProbe
        : undefined;
  return probe?.terminationGracePeriodSeconds ?? podGrace;
}

/**
 * Kills one container: the Killing event, its preStop hook within the grace period, then the
 * stop with what is left of it. `spec` undefined (an orphan): no hook.
 */
export async function killContainer(
  deps: LifecycleDeps,
  pod: Pod,
  spec: Container | undefined,
  container: { readonly id: string; readonly name: string },
  podIP: string,
  opts: KillOptions = {},
): Promise<void> {
  let grace = killGrace(pod, spec, opts);
  deps.events.event(
    pod,
    'Normal',
    Reasons.Killing,
    opts.message ?? `Stopping container ${container.name}`,
    containerFieldPath(pod, container.name),
  );
  const preStop = spec?.lifecycle?.preStop;
  if (spec && preStop && grace > 0) {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const hook = runHook(deps, pod, spec, container.id, preStop, podIP).then((msg) => {
      if (msg === undefined) return;
      console.error(`agent: preStop hook of ${podName(pod)}/${container.name}: ${msg}`);
      deps.events.event(
        pod,
        'Warning',
        Reasons.FailedPreStopHook,
        'PreStopHook failed',
        containerFieldPath(pod, container.name),
      );
    });
    await Promise.race([hook, new Promise((r) => (timer = setTimeout(r, grace * 1000)))]);
    clearTimeout(timer);
    grace -= Math.floor((Date.now() - started) / 1000);
  }
  if (opts.turn && grace > 0) {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([opts.turn, new Promise((r) => (timer = setTimeout(r, grace * 1000)))]);
    clearTimeout(timer);
    grace -= Math.floor((Date.now() - started) / 1000);
  }
  if (opts.graceOverride === undefined) grace = Math.max(grace, MIN_GRACE_SECONDS);
  await deps.runtime.stopContainer(container.id, Math.max(0, grace));
}

/**
 * Kills a running container that failed its liveness or startup probe (`Killing`: "Container c
 * failed liveness probe, will be restarted"). Answers true when it was killed and the restart
 * policy (not Never) brings it back.
 */
export async function killUnhealthy(
  deps: LifecycleDeps,
  pod: Pod,
  spec: Container,
  container: ContainerInstance,
  state: PodRuntimeState,
): Promise<boolean> {
  const verdict = deps.probes?.mustKill(pod.metadata.uid ?? '', spec.name ?? '', container.id);
  if (!verdict) return false;
  const restart = (pod.spec?.restartPolicy ?? 'Always') !== 'Never';
  await killContainer(deps, pod, spec, container, state.sandboxes[0]?.ips[0] ?? '', {
    message: restart ? `${verdict.message}, will be restarted` : verdict.message,
    probe: verdict.reason,
  });
  return restart;
}
