/**
 * Containers of a pod spec (`validateContainers`, `validateInitContainers`,
 * `validateContainerCommon`): names and images, ports, env, mounts, pull policy, resources,
 * probes and lifecycle hooks, security context.
 */
import {
  duplicate,
  forbidden,
  invalid,
  NEGATIVE,
  notFound,
  notSupported,
  required,
  type FieldError,
} from '../field-error.js';
import {
  inclusiveRangeError,
  isDNS1123Label,
  isHTTPHeaderName,
  isValidPortName,
  isValidPortNum,
} from '../formats.js';
import { arr, bool, has, isObject, num, obj, objects, str, type JsonObject } from '../json.js';
import { child, index } from '../path.js';
import { validateEnv, validateEnvFrom } from './env.js';
import { validateResourceRequirements } from './resources.js';
import { validateLocalDescendingPath } from './paths.js';

/** What container validation needs from the surrounding pod spec. */
export interface ContainerContext {
  /** Volume name → volume, for mounts. */
  readonly volumes: ReadonlyMap<string, JsonObject>;
  /** The pod's terminationGracePeriodSeconds (for sleep hooks). */
  readonly gracePeriod: number | undefined;
  /** `hostUsers` is true (or unset). */
  readonly hostUsers: boolean;
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validatePorts(c: JsonObject, path: string, errs: FieldError[]): void {
  const names = new Set<string>();
  objects(c, 'ports').forEach((port, i) => {
    const p = index(path, i);
    const name = str(port, 'name');
    if (name !== '') {
      const msgs = isValidPortName(name);
      for (const msg of msgs) errs.push(invalid(child(p, 'name'), name, msg));
      if (msgs.length === 0) {
        if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
        else names.add(name);
      }
    }
    const containerPort = num(port, 'containerPort') ?? 0;
    if (containerPort === 0) errs.push(required(child(p, 'containerPort')));
    else
      for (const msg of isValidPortNum(containerPort))
        errs.push(invalid(child(p, 'containerPort'), containerPort, msg));
    const hostPort = num(port, 'hostPort') ?? 0;
    if (hostPort !== 0)
      for (const msg of isValidPortNum(hostPort)) errs.push(invalid(child(p, 'hostPort'), hostPort, msg));
    const protocol = str(port, 'protocol');
    if (protocol === '') errs.push(required(child(p, 'protocol')));
    else if (!PROTOCOLS.includes(protocol))
      errs.push(notSupported(child(p, 'protocol'), protocol, PROTOCOLS));
  });
}

function validateMounts(c: JsonObject, ctx: ContainerContext, path: string, errs: FieldError[]): void {
  const mountPaths = new Set<string>();
  const deviceNames = new Set(objects(c, 'volumeDevices').map((d) => str(d, 'name')));
  objects(c, 'volumeMounts').forEach((m, i) => {
    const p = index(path, i);
    const name = str(m, 'name');
    if (name === '') errs.push(required(child(p, 'name')));
    if (!ctx.volumes.has(name)) errs.push(notFound(child(p, 'name'), name));
    const mountPath = str(m, 'mountPath');
    if (mountPath === '') errs.push(required(child(p, 'mountPath')));
    if (mountPaths.has(mountPath)) errs.push(invalid(child(p, 'mountPath'), mountPath, 'must be unique'));
    mountPaths.add(mountPath);
    if (name !== '' && deviceNames.has(name))
      errs.push(invalid(child(p, 'name'), name, 'must not already exist in volumeDevices'));
    const subPath = str(m, 'subPath');
    const subPathExpr = str(m, 'subPathExpr');
    // kube reports sub-path errors without the mount's index.
    if (subPath !== '') validateLocalDescendingPath(subPath, child(path, 'subPath'), errs);
    if (subPathExpr !== '') {
      if (subPath !== '')
        errs.push(
          invalid(child(p, 'subPathExpr'), subPathExpr, 'subPathExpr and subPath are mutually exclusive'),
        );
      validateLocalDescendingPath(subPathExpr, child(path, 'subPathExpr'), errs);
    }
    const propagation = str(m, 'mountPropagation');
    const modes = ['Bidirectional', 'HostToContainer', 'None'];
    if (has(m, 'mountPropagation') && !modes.includes(propagation)) {
      errs.push(notSupported(child(path, 'mountPropagation'), propagation, modes));
    }
  });
}

function validatePortNumOrName(port: unknown, path: string, errs: FieldError[]): void {
  if (typeof port === 'number') {
    for (const msg of isValidPortNum(port)) errs.push(invalid(path, port, msg));
  } else if (typeof port === 'string') {
    for (const msg of isValidPortName(port)) errs.push(invalid(path, port, msg));
  } else {
    for (const msg of isValidPortNum(0)) errs.push(invalid(path, 0, msg));
  }
}

/** A probe or lifecycle handler: exactly one action, each well-formed. */
function validateHandler(
  h: JsonObject,
  sleepAllowed: boolean,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  let count = 0;
  const one = (k: string): JsonObject | undefined => {
    const v = obj(h, k);
    if (v === undefined) return undefined;
    if (count > 0) {
      errs.push(forbidden(child(path, k), 'may not specify more than 1 handler type'));
      return undefined;
    }
    count++;
    return v;
  };
  const exec = one('exec');
  if (exec !== undefined && (arr(exec, 'command') ?? []).length === 0)
    errs.push(required(child(path, 'exec', 'command')));
  const httpGet = one('httpGet');
  if (httpGet !== undefined) {
    const p = child(path, 'httpGet');
    if (str(httpGet, 'path') === '') errs.push(required(child(p, 'path')));
    validatePortNumOrName(httpGet['port'], child(p, 'port'), errs);
    const scheme = str(httpGet, 'scheme');
    if (scheme !== 'HTTP' && scheme !== 'HTTPS')
      errs.push(notSupported(child(p, 'scheme'), scheme, ['HTTP', 'HTTPS']));
    for (const header of objects(httpGet, 'httpHeaders')) {
      for (const msg of isHTTPHeaderName(str(header, 'name')))
        errs.push(invalid(child(p, 'httpHeaders'), str(header, 'name'), msg));
    }
  }
  const tcp = one('tcpSocket');
  if (tcp !== undefined) validatePortNumOrName(tcp['port'], child(path, 'tcpSocket', 'port'), errs);
  const grpc = one('grpc');
  if (grpc !== undefined) validatePortNumOrName(num(grpc, 'port') ?? 0, child(path, 'grpc', 'port'), errs);
  if (sleepAllowed) {
    const sleep = one('sleep');
    const grace = ctx.gracePeriod;
    const seconds = num(sleep, 'seconds') ?? 0;
    if (sleep !== undefined && grace !== undefined && (seconds < 0 || seconds > grace)) {
      errs.push(
        invalid(
          child(path, 'sleep'),
          seconds,
          `must be non-negative and less than terminationGracePeriodSeconds (${grace})`,
        ),
      );
    }
  }
  if (count === 0) errs.push(required(path, 'must specify a handler type'));
}

function validateProbe(
  c: JsonObject,
  k: string,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const probe = obj(c, k);
  if (probe === undefined) return;
  const p = child(path, k);
  validateHandler(probe, false, ctx, p, errs);
  for (const f of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    const v = num(probe, f) ?? 0;
    if (v < 0) errs.push(invalid(child(p, f), v, NEGATIVE));
  }
  const tgps = num(probe, 'terminationGracePeriodSeconds');
  if (tgps !== undefined && tgps <= 0)
    errs.push(invalid(child(p, 'terminationGracePeriodSeconds'), tgps, 'must be greater than 0'));
  if (k === 'readinessProbe' && has(probe, 'terminationGracePeriodSeconds')) {
    errs.push(
      invalid(child(p, 'terminationGracePeriodSeconds'), tgps ?? null, 'must not be set for readinessProbes'),
    );
  }
  const success = num(probe, 'successThreshold') ?? 0;
  if ((k === 'livenessProbe' || k === 'startupProbe') && success !== 1) {
    errs.push(invalid(child(p, 'successThreshold'), success, 'must be 1'));
  }
}

/** Probes and lifecycle hooks, allowed on regular and restartable init containers. */
export function validateProbesAndLifecycle(
  c: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const lifecycle = obj(c, 'lifecycle');
  for (const hook of ['postStart', 'preStop']) {
    const h = obj(lifecycle, hook);
    if (h !== undefined) validateHandler(h, true, ctx, child(path, 'lifecycle', hook), errs);
  }
  validateProbe(c, 'livenessProbe', ctx, path, errs);
  validateProbe(c, 'readinessProbe', ctx, path, errs);
  validateProbe(c, 'startupProbe', ctx, path, errs);
}

const MAX_ID = 4294967295;

function validateSecurityContext(
  c: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const sc = obj(c, 'securityContext');
  if (sc === undefined) return;
  for (const f of ['runAsUser', 'runAsGroup']) {
    const v = num(sc, f);
    if (v !== undefined && (v < 0 || v > MAX_ID))
      errs.push(invalid(child(path, f), v, inclusiveRangeError(0, MAX_ID)));
  }
  const procMount = sc['procMount'];
  if (procMount !== undefined && procMount !== null) {
    if (procMount !== 'Default' && procMount !== 'Unmasked') {
      errs.push(notSupported(child(path, 'procMount'), procMount, ['Default', 'Unmasked']));
    } else if (procMount === 'Unmasked' && ctx.hostUsers) {
      errs.push(invalid(child(path, 'procMount'), procMount, '`hostUsers` must be false to use `Unmasked`'));
    }
  }
  validateSeccompProfile(sc, child(path, 'seccompProfile'), errs);
  if (bool(sc, 'allowPrivilegeEscalation') === false) {
    if (bool(sc, 'privileged') === true) {
      errs.push(invalid(path, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    }
    const add = arr(obj(sc, 'capabilities'), 'add') ?? [];
    if (add.includes('CAP_SYS_ADMIN')) {
      errs.push(
        invalid(
          path,
          sc,
          'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN',
        ),
      );
    }
  }
}

/** `seccompProfile`: a known type; Localhost needs a profile and only Localhost may have one. */
export function validateSeccompProfile(parent: JsonObject, path: string, errs: FieldError[]): void {
  const profile = obj(parent, 'seccompProfile');
  if (profile === undefined) return;
  const type = str(profile, 'type');
  const types = ['Localhost', 'RuntimeDefault', 'Unconfined'];
  if (type === '') errs.push(required(child(path, 'type'), 'type is required when seccompProfile is set'));
  else if (!types.includes(type)) errs.push(notSupported(child(path, 'type'), type, types));
  const local = profile['localhostProfile'];
  if (type === 'Localhost' && (typeof local !== 'string' || local === '')) {
    errs.push(required(child(path, 'localhostProfile'), 'must be set when seccomp type is Localhost'));
  } else if (type !== 'Localhost' && local !== undefined && local !== null) {
    errs.push(
      invalid(child(path, 'localhostProfile'), local, 'can only be set when seccomp type is Localhost'),
    );
  }
}

/** kube's `validateContainerCommon`: everything every container kind must satisfy. */
export function validateContainerCommon(
  c: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const name = str(c, 'name');
  if (name === '') errs.push(required(child(path, 'name')));
  else for (const msg of isDNS1123Label(name)) errs.push(invalid(child(path, 'name'), name, msg));
  if (str(c, 'image') === '') errs.push(required(child(path, 'image')));
  const tmp = str(c, 'terminationMessagePolicy');
  if (tmp === '') errs.push(required(child(path, 'terminationMessagePolicy')));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(notSupported(child(path, 'terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }
  validatePorts(c, child(path, 'ports'), errs);
  validateEnv(c, child(path, 'env'), errs);
  validateEnvFrom(c, child(path, 'envFrom'), errs);
  validateMounts(c, ctx, child(path, 'volumeMounts'), errs);
  const pull = str(c, 'imagePullPolicy');
  if (pull === '') errs.push(required(child(path, 'imagePullPolicy')));
  else if (!['Always', 'IfNotPresent', 'Never'].includes(pull)) {
    errs.push(notSupported(child(path, 'imagePullPolicy'), pull, ['Always', 'IfNotPresent', 'Never']));
  }
  validateResourceRequirements(c['resources'], child(path, 'resources'), errs);
  validateSecurityContext(c, ctx, child(path, 'securityContext'), errs);
}

/** Regular containers: at least one, unique names, probes allowed, no restartPolicy. */
export function validateContainers(
  spec: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const list = arr(spec, 'containers') ?? [];
  if (list.length === 0) {
    errs.push(required(path));
    return;
  }
  const names = new Set<string>();
  list.forEach((item, i) => {
    const c = isObject(item) ? item : {};
    const p = index(path, i);
    validateContainerCommon(c, ctx, p, errs);
    const name = str(c, 'name');
    if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else names.add(name);
    validateProbesAndLifecycle(c, ctx, p, errs);
    if (has(c, 'restartPolicy'))
      errs.push(forbidden(child(p, 'restartPolicy'), 'may not be set for non-init containers'));
  });
  checkHostPortConflicts(objects(spec, 'containers'), path, errs);
}

/** Init containers: unique among all containers; probes and hooks only with restartPolicy Always. */
export function validateInitContainers(
  spec: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const names = new Set(objects(spec, 'containers').map((c) => str(c, 'name')));
  objects(spec, 'initContainers').forEach((c, i) => {
    const p = index(path, i);
    validateContainerCommon(c, ctx, p, errs);
    const policy = c['restartPolicy'];
    const restartable = policy === 'Always';
    if (policy !== undefined && policy !== null && !restartable) {
      errs.push(notSupported(child(p, 'restartPolicy'), policy, ['Always']));
    }
    const name = str(c, 'name');
    if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else if (name !== '') names.add(name);
    checkHostPortConflicts([c], path, errs);
    if (restartable) {
      validateProbesAndLifecycle(c, ctx, p, errs);
    } else {
      for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (has(c, k))
          errs.push(
            forbidden(child(p, k), 'may not be set for init containers without restartPolicy=Always'),
          );
      }
    }
  });
}

/** Host ports may not collide (protocol, host IP and port) within one list of containers. */
function checkHostPortConflicts(containers: JsonObject[], path: string, errs: FieldError[]): void {
  const seen = new Set<string>();
  containers.forEach((c, ci) => {
    objects(c, 'ports').forEach((port, pi) => {
      const hostPort = num(port, 'hostPort') ?? 0;
      if (hostPort === 0) return;
      const k = `${str(port, 'protocol')}/${str(port, 'hostIP')}/${hostPort}`;
      if (seen.has(k)) errs.push(duplicate(child(index(child(index(path, ci), 'ports'), pi), 'hostPort'), k));
      else seen.add(k);
    });
  });
}
