/**
 * The webhooks of every Mutating- or ValidatingWebhookConfiguration, kept current by an
 * {@link Informer} over the kind's storage prefix (kube's configuration managers): the
 * configurations in name order, each one's webhooks in their order. The list is rebuilt on each
 * change, so a new, changed or deleted configuration takes effect as soon as the store delivers
 * it.
 */
import type { JsonObject, KubeObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';
import type { Informer } from './informer.js';
import type { MatchCondition, WebhookClientConfig, WebhookRule, WebhookSpec } from './types.js';

/** The strings of a JSON array (others dropped; not an array: none). */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The string at `key` of `o` ('' when absent or not a string). */
export function str(o: JsonObject, key: string): string {
  const v = o[key];
  return typeof v === 'string' ? v : '';
}

/** The objects of a JSON array (others dropped; not an array: none). */
export function objects(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

function clientConfigOf(cc: JsonObject): WebhookClientConfig {
  const service = isJsonObject(cc['service']) ? cc['service'] : undefined;
  const ca = str(cc, 'caBundle');
  return {
    url: typeof cc['url'] === 'string' ? cc['url'] : undefined,
    service:
      service === undefined
        ? undefined
        : {
            namespace: str(service, 'namespace'),
            name: str(service, 'name'),
            path: str(service, 'path'),
            port: typeof service['port'] === 'number' ? service['port'] : 443,
          },
    caBundle: ca === '' ? undefined : Buffer.from(ca, 'base64').toString('utf8'),
  };
}

/** One `rules[]` entry with its defaults (scope `*`). */
export function ruleOf(r: JsonObject): WebhookRule {
  const scope = r['scope'];
  return {
    operations: strings(r['operations']),
    apiGroups: strings(r['apiGroups']),
    apiVersions: strings(r['apiVersions']),
    resources: strings(r['resources']),
    scope: scope === 'Cluster' || scope === 'Namespaced' ? scope : '*',
  };
}

/** The webhooks of one stored configuration, defaults applied (kube's v1 defaults). */
export function webhooksOf(config: KubeObject, mutating: boolean): WebhookSpec[] {
  const configurationName = config.metadata.name ?? '';
  return objects(config['webhooks']).map((w, i) => {
    const name = str(w, 'name');
    const timeout = w['timeoutSeconds'];
    const conditions: MatchCondition[] = objects(w['matchConditions']).map((c) => ({
      name: str(c, 'name'),
      expression: str(c, 'expression'),
    }));
    return {
      uid: `${configurationName}/${name}/${i}`,
      configurationName,
      name,
      mutating,
      clientConfig: clientConfigOf(isJsonObject(w['clientConfig']) ? w['clientConfig'] : {}),
      rules: objects(w['rules']).map(ruleOf),
      failurePolicy: w['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: w['matchPolicy'] === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: isJsonObject(w['namespaceSelector']) ? w['namespaceSelector'] : {},
      objectSelector: isJsonObject(w['objectSelector']) ? w['objectSelector'] : {},
      sideEffects: str(w, 'sideEffects'),
      timeoutSeconds: typeof timeout === 'number' && timeout > 0 ? Math.min(timeout, 30) : 10,
      admissionReviewVersions: strings(w['admissionReviewVersions']),
      reinvocationPolicy: mutating && w['reinvocationPolicy'] === 'IfNeeded' ? 'IfNeeded' : 'Never',
      matchConditions: conditions,
    };
  });
}

/** The webhooks of one configuration kind, in kube's call order. */
export class WebhookConfigurations {
  readonly #informer: Informer;
  readonly #mutating: boolean;
  #webhooks: readonly WebhookSpec[] = [];

  constructor(informer: Informer, mutating: boolean) {
    this.#informer = informer;
    this.#mutating = mutating;
    informer.onChange(() => this.#rebuild());
    this.#rebuild();
  }

  /** True once the configurations were listed. */
  get synced(): boolean {
    return this.#informer.synced;
  }

  /** Resolves once listed. */
  whenSynced(): Promise<void> {
    return this.#informer.whenSynced();
  }

  /** Every webhook, configurations by name, webhooks in their configuration's order. */
  get webhooks(): readonly WebhookSpec[] {
    return this.#webhooks;
  }

  #rebuild(): void {
    const configs = [...this.#informer.values()].sort((a, b) => {
      const x = a.metadata.name ?? '';
      const y = b.metadata.name ?? '';
      return x < y ? -1 : x > y ? 1 : 0;
    });
    this.#webhooks = configs.flatMap((c) => webhooksOf(c, this.#mutating));
  }
}
