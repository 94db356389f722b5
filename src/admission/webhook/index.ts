/**
 * The admission webhook plugins of one server: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook (kube's names), over the webhook configurations kept by informers
 * on the store, with the namespaces, Services, EndpointSlices and Endpoints they need read the
 * same way (started on first need). Build once per server with {@link webhookAdmission}, put
 * `mutating` and `validating` in the admission chain (kube's order: the mutating one last among
 * mutating plugins, the validating one after the built-in validating plugins), and `stop()` on
 * close.
 */
import type { Store } from '../../../storage/interface.js';
import { internalError } from '../../api/errors.js';
import type { KubeObject } from '../../api/object.js';
import type { Registry, ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.js';
import { WebhookClient } from './client.js';
import { WebhookConfigurations } from './configurations.js';
import { admissionForbidden } from './errors.js';
import { cachedOrStored, Informer, syncedWithin } from './informer.js';
import { isExempt } from './matching.js';
import { admitMutating, type MutatingDeps, type WebhookObserver } from './mutating.js';
import type { ServiceObjects } from './service-resolver.js';
import type { MatchConditionEvaluator } from './types.js';
import { validateWebhooks } from './validating.js';

export type {
  MatchConditionEvaluator,
  MatchConditionInput,
  MatchConditionResult,
  WebhookSpec,
} from './types.js';
export type { WebhookObservation, WebhookObserver } from './mutating.js';
export { NO_EVALUATOR } from './selection.js';

/** What the plugins are built from. */
export interface WebhookAdmissionDeps {
  /**
   * The resource layer's store (JSON values, under `--etcd-prefix`), or a function giving it
   * (called at the first read: the wiring builds the chain before the resource layer).
   */
  readonly store: Store | (() => Store);
  readonly registry: Registry;
  /** `matchConditions` (CEL); without one, webhooks with match conditions fail per failurePolicy. */
  readonly matchConditions?: MatchConditionEvaluator;
  /** Defaulting of a patched object (kube defaults again after each patch); default: none. */
  readonly defaulter?: (type: ResourceType, obj: KubeObject) => void;
  /** Each finished webhook call (for `apiserver_admission_webhook_admission_duration_seconds`). */
  readonly observe?: WebhookObserver;
  /** Failures worth a log line (watch errors, webhooks failing open). */
  readonly onError?: (message: string, err: unknown) => void;
  /**
   * How long a request waits for the first list of the configurations (then 403 "not yet ready",
   * as kube) or of the namespaces, Services and EndpointSlices it reads (default 10 s).
   */
  readonly readyTimeoutMs?: number;
}

/** The two plugins and their shutdown. */
export interface WebhookAdmission {
  readonly mutating: AdmissionPlugin;
  readonly validating: AdmissionPlugin;
  /**
   * Starts watching the configurations (call when the server is ready). Without it they are
   * listed at the first write a plugin sees.
   */
  start(): void;
  /** Ends the informers and closes kept-alive connections. */
  stop(): void;
}

function prefixOf(registry: Registry, group: string, version: string, kind: string): string {
  const t = registry.byKind(group, version, kind);
  if (t === undefined) throw new Error(`the registry serves no ${group}/${version} ${kind}`);
  return `/${t.storageResource}/`;
}

/** The read and watch calls of a store obtained on first use. */
function lazyStore(get: () => Store): Pick<Store, 'get' | 'range' | 'watch'> {
  return {
    get: (key, options) => get().get(key, options),
    range: (span, options) => get().range(span, options),
    watch: (span, options) => get().watch(span, options),
  };
}

/** Builds both plugins (nothing runs until `start()` or the first write). */
export function webhookAdmission(deps: WebhookAdmissionDeps): WebhookAdmission {
  const onError = deps.onError ?? (() => undefined);
  const given = deps.store;
  const store = lazyStore(typeof given === 'function' ? given : () => given);
  const informers: Informer[] = [];
  const informer = (group: string, version: string, kind: string): Informer => {
    const i = new Informer(store, prefixOf(deps.registry, group, version, kind), (err) =>
      onError(`admission webhooks: watch of ${kind} failed`, err),
    );
    informers.push(i);
    return i;
  };
  const mutatingInformer = informer('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration');
  const validatingInformer = informer('admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration');
  const namespaces = informer('', 'v1', 'Namespace');
  const services = informer('', 'v1', 'Service');
  const endpoints = informer('', 'v1', 'Endpoints');
  const slices = informer('discovery.k8s.io', 'v1', 'EndpointSlice');
  const mutatingConfigs = new WebhookConfigurations(mutatingInformer, true);
  const validatingConfigs = new WebhookConfigurations(validatingInformer, false);

  const readyTimeoutMs = deps.readyTimeoutMs ?? 10_000;
  const synced = (i: Parameters<typeof syncedWithin>[0]): Promise<boolean> => syncedWithin(i, readyTimeoutMs);
  const lookupReady = async (i: Informer, kind: string): Promise<void> => {
    if (!(await synced(i))) throw internalError(`admission webhooks: the ${kind} informer has not synced`);
  };

  const nsPrefix = prefixOf(deps.registry, '', 'v1', 'Namespace');
  const svcPrefix = prefixOf(deps.registry, '', 'v1', 'Service');
  const epPrefix = prefixOf(deps.registry, '', 'v1', 'Endpoints');

  const serviceObjects: ServiceObjects = {
    service: async (ns, name) => {
      await lookupReady(services, 'Service');
      return services.get(`${svcPrefix}${ns}/${name}`);
    },
    endpoints: async (ns, name) => {
      await lookupReady(endpoints, 'Endpoints');
      return endpoints.get(`${epPrefix}${ns}/${name}`);
    },
    endpointSlices: async (ns, service) => {
      await lookupReady(slices, 'EndpointSlice');
      const out: KubeObject[] = [];
      for (const s of slices.values()) {
        if (s.metadata.namespace !== ns) continue;
        if (s.metadata.labels?.['kubernetes.io/service-name'] === service) out.push(s);
      }
      return out;
    },
  };

  const namespaceLabels = async (name: string): Promise<Readonly<Record<string, string>> | undefined> => {
    await lookupReady(namespaces, 'Namespace');
    const obj = await cachedOrStored(namespaces, store, `${nsPrefix}${name}`);
    return obj === undefined ? undefined : (obj.metadata.labels ?? {});
  };

  const client = new WebhookClient();
  const dispatchDeps: MutatingDeps = {
    registry: deps.registry,
    namespaceLabels,
    matchConditions: deps.matchConditions,
    client,
    services: serviceObjects,
    defaulter: deps.defaulter,
    observe: deps.observe,
    onError,
  };
  const ready = async (configs: WebhookConfigurations, attrs: AdmissionAttributes): Promise<void> => {
    if (!(await synced(configs))) throw admissionForbidden(attrs, 'not yet ready to handle request');
  };

  const mutating: AdmissionPlugin = {
    name: 'MutatingAdmissionWebhook',
    handles: (attrs) => !isExempt(attrs) && (!mutatingConfigs.synced || mutatingConfigs.webhooks.length > 0),
    admit: async (attrs) => {
      await ready(mutatingConfigs, attrs);
      const hooks = mutatingConfigs.webhooks;
      if (hooks.length > 0) await admitMutating(dispatchDeps, hooks, attrs);
    },
  };
  const validating: AdmissionPlugin = {
    name: 'ValidatingAdmissionWebhook',
    handles: (attrs) =>
      !isExempt(attrs) && (!validatingConfigs.synced || validatingConfigs.webhooks.length > 0),
    validate: async (attrs) => {
      await ready(validatingConfigs, attrs);
      const hooks = validatingConfigs.webhooks;
      if (hooks.length > 0) await validateWebhooks(dispatchDeps, hooks, attrs);
    },
  };
  return {
    mutating,
    validating,
    start: () => {
      mutatingInformer.start();
      validatingInformer.start();
    },
    stop: () => {
      for (const i of informers) i.close();
      client.close();
    },
  };
}
