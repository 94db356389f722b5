/**
 * A container's environment as kubelet builds it: `envFrom` sources first (ConfigMaps and Secrets,
 * with their prefix; keys that are not valid variable names are skipped), then `env` in order,
 * each `value` expanding `$(VAR)` references to variables defined before it or to the Service
 * variables (`$$` escapes), and `valueFrom` reading a ConfigMap or Secret key, a field of the pod
 * (`fieldRef`) or a resource of a container (`resourceFieldRef`, with its divisor; an unset
 * limit is the node's allocatable); last, the Service variables (service-env.ts) whose names the
 * container does not define itself.
 *
 * A missing ConfigMap, Secret or key that is not `optional` fails with an {@link EnvError}, which
 * the pod worker reports as kubelet does: waiting reason `CreateContainerConfigError`.
 */
import type { ConfigMap, Container, Pod, Secret, Service } from '../../api/types/core-v1.js';
import { parseQuantity } from './resources.js';
import { serviceEnv } from './service-env.js';

/** Reads the objects env refers to; undefined when absent. */
export interface ObjectLookup {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /**
   * Every Service the node knows, for the Service variables.
   * @throws EnvError while the node has not read them once (kubelet's words).
   */
  services(): Promise<readonly Service[]>;
}

/** A container's environment cannot be built (kubelet's CreateContainerConfigError). */
export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

/** What env needs of the node and the running pod. */
export interface EnvContext {
  readonly lookup: ObjectLookup;
  readonly hostIPs: readonly string[];
  readonly podIPs: readonly string[];
  /** Node allocatable cpu (cores) and memory (bytes), for unset limits. */
  readonly nodeAllocatable: { readonly cpu: number; readonly memory: number };
}

const VALID_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** Expands `$(NAME)` from `vars`; unknown references stay as written; `$$` is a literal `$`. */
export function expandVars(input: string, vars: Pick<ReadonlyMap<string, string>, 'get'>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = vars.get(name);
      out += value ?? `$(${name})`;
      i = close;
    } else {
      out += ch;
    }
  }
  return out;
}

function fieldValue(pod: Pod, path: string, ctx: EnvContext): string {
  const label = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (label) {
    const map = label[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[label[2] ?? ''] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIPs.join(',');
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
    default:
      throw new EnvError(`unsupported fieldRef ${path}`);
  }
}

/** A container's resource (`limits.memory`...) by a divisor, as env and downward API volumes show it. */
export function resourceValue(
  pod: Pod,
  container: Container,
  resource: string,
  divisor: string | undefined,
  ctx: Pick<EnvContext, 'nodeAllocatable'>,
): string {
  const target = resource;
  const [kind, name] = target.split('.') as [string, string | undefined];
  if (!name || (kind !== 'limits' && kind !== 'requests'))
    throw new EnvError(`unsupported resourceFieldRef ${resource}`);
  const spec = kind === 'limits' ? container.resources?.limits : container.resources?.requests;
  let value = parseQuantity(spec?.[name]);
  if (!Number.isFinite(value)) {
    if (name === 'cpu') value = kind === 'limits' ? ctx.nodeAllocatable.cpu : 0;
    else if (name === 'memory') value = kind === 'limits' ? ctx.nodeAllocatable.memory : 0;
    else value = 0;
  }
  // No divisor, or a zero one (a stored resourceFieldRef's divisor reads "0"), means 1, as kubelet's.
  const parsed = divisor ? parseQuantity(divisor) : 0;
  const div = parsed === 0 ? 1 : parsed;
  if (!Number.isFinite(div) || div < 0)
    throw new EnvError(`invalid divisor ${divisor ?? ''} of ${resource} in pod ${pod.metadata.name ?? ''}`);
  return String(Math.ceil(value / div));
}

function decodeSecret(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** Builds the environment of one container of a pod, in kubelet's order. */
export async function buildEnv(
  pod: Pod,
  container: Container,
  ctx: EnvContext,
): Promise<{ key: string; value: string }[]> {
  const ns = pod.metadata.namespace ?? 'default';
  const services = serviceEnv(await ctx.lookup.services(), ns, pod.spec?.enableServiceLinks ?? true);
  const vars = new Map<string, string>();
  // `$(VAR)` sees the variables defined so far, then the Service ones.
  const known = { get: (name: string) => vars.get(name) ?? services.get(name) };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const name = from.configMapRef.name ?? '';
      const cm = await ctx.lookup.configMap(ns, name);
      if (!cm) {
        if (from.configMapRef.optional) continue;
        throw new EnvError(`configmap "${name}" not found`);
      }
      for (const [k, v] of Object.entries(cm.data ?? {}))
        if (VALID_NAME.test(prefix + k)) vars.set(prefix + k, v);
    }
    if (from.secretRef) {
      const name = from.secretRef.name ?? '';
      const s = await ctx.lookup.secret(ns, name);
      if (!s) {
        if (from.secretRef.optional) continue;
        throw new EnvError(`secret "${name}" not found`);
      }
      for (const k of Object.keys(s.data ?? {})) {
        if (VALID_NAME.test(prefix + k)) vars.set(prefix + k, decodeSecret(s, k) ?? '');
      }
    }
  }
  for (const e of container.env ?? []) {
    const name = e.name ?? '';
    const src = e.valueFrom;
    if (!src) {
      vars.set(name, expandVars(e.value ?? '', known));
      continue;
    }
    if (src.fieldRef) {
      vars.set(name, fieldValue(pod, src.fieldRef.fieldPath ?? '', ctx));
    } else if (src.resourceFieldRef) {
      const cname = src.resourceFieldRef.containerName || container.name || '';
      const target =
        [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find(
          (c) => c.name === cname,
        ) ?? container;
      vars.set(
        name,
        resourceValue(pod, target, src.resourceFieldRef.resource ?? '', src.resourceFieldRef.divisor, ctx),
      );
    } else if (src.configMapKeyRef) {
      const ref = src.configMapKeyRef;
      const cm = await ctx.lookup.configMap(ns, ref.name ?? '');
      const v = cm?.data?.[ref.key ?? ''];
      if (v === undefined) {
        if (ref.optional) continue;
        throw new EnvError(
          cm
            ? `couldn't find key ${ref.key ?? ''} in ConfigMap ${ns}/${ref.name ?? ''}`
            : `configmap "${ref.name ?? ''}" not found`,
        );
      }
      vars.set(name, v);
    } else if (src.secretKeyRef) {
      const ref = src.secretKeyRef;
      const s = await ctx.lookup.secret(ns, ref.name ?? '');
      const v = s ? decodeSecret(s, ref.key ?? '') : undefined;
      if (v === undefined) {
        if (ref.optional) continue;
        throw new EnvError(
          s
            ? `couldn't find key ${ref.key ?? ''} in Secret ${ns}/${ref.name ?? ''}`
            : `secret "${ref.name ?? ''}" not found`,
        );
      }
      vars.set(name, v);
    }
  }
  // The Service variables last, where the container does not define the name itself.
  for (const [key, value] of services) if (!vars.has(key)) vars.set(key, value);
  return [...vars].map(([key, value]) => ({ key, value }));
}
