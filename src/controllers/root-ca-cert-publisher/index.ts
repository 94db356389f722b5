/**
 * The `root-ca-certificate-publisher-controller` (alias `root-ca-cert-publisher`), kube's
 * `pkg/controller/certificates/rootcacertpublisher`: every namespace holds the ConfigMap
 * `kube-root-ca.crt` whose `ca.crt` is the cluster's root CA bundle (`--root-ca-file`, or else the
 * CA the manager trusts its API server with), annotated `kubernetes.io/description`.
 *
 * A namespace added or changed queues it; so does a change to, or the deletion of, a
 * `kube-root-ca.crt`. The sync creates the ConfigMap when the cache does not hold it (a create
 * refused because the namespace is gone or terminating is dropped), and puts `data` back to
 * exactly `{ca.crt}` and the annotation back when either differs. `binaryData` is left alone, as
 * kube does.
 */
import type { ConfigMap, Namespace } from '../../api/types/core-v1.js';
import {
  CONFIG_MAPS,
  NAMESPACES,
  defaultControllerRateLimiter,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { namespaceGoneOrTerminating } from '../shared/namespaces.js';
import { rootCaOf } from '../shared/root-ca.js';
import { startWorkers } from '../shared/workers.js';

/** The ConfigMap's name. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** Its annotation. */
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** The annotation's value (kube's wording). */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

function sameData(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>>,
): boolean {
  const ak = Object.keys(a ?? {});
  return ak.length === Object.keys(b).length && ak.every((k) => a?.[k] === b[k]);
}

/** One running publisher of `rootCa`. */
export class RootCaPublisher {
  readonly #ctx: ControllerContext;
  readonly #rootCa: string;
  readonly #queue: WorkQueue<string>;
  readonly #configMaps: SharedInformer<ConfigMap>;

  constructor(ctx: ControllerContext, rootCa: string) {
    this.#ctx = ctx;
    this.#rootCa = rootCa;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#configMaps = ctx.informers.informer<ConfigMap>(CONFIG_MAPS);
    const namespaces = ctx.informers.informer<Namespace>(NAMESPACES);
    const nsSeen = (ns: Namespace): void => this.#queue.add(ns.metadata.name ?? '');
    namespaces.addHandler({ add: nsSeen, update: (_, ns) => nsSeen(ns) });
    const cmSeen = (cm: ConfigMap): void => {
      if (cm.metadata.name === ROOT_CA_CONFIGMAP) this.#queue.add(cm.metadata.namespace ?? '');
    };
    this.#configMaps.addHandler({ update: (_, cm) => cmSeen(cm), delete: cmSeen });
  }

  /** Starts the worker once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'root CA publisher', {
      queue: this.#queue,
      workers: 1,
      sync: (ns) => this.sync(ns),
    });
  }

  /** Publishes the CA in namespace `ns`. */
  async sync(ns: string): Promise<void> {
    if (ns === '') return;
    const client = this.#ctx.client.resource<ConfigMap>(CONFIG_MAPS);
    const data = { 'ca.crt': this.#rootCa };
    const cm = this.#configMaps.store.get(`${ns}/${ROOT_CA_CONFIGMAP}`);
    if (cm === undefined) {
      try {
        await client.create(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: ROOT_CA_CONFIGMAP,
              namespace: ns,
              annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION },
            },
            data,
          },
          { namespace: ns },
        );
      } catch (err) {
        if (namespaceGoneOrTerminating(err)) return;
        throw err;
      }
      return;
    }
    const annotations = cm.metadata.annotations ?? {};
    if (sameData(cm.data, data) && (annotations[DESCRIPTION_ANNOTATION] ?? '') !== '') return;
    await client.update(
      {
        ...cm,
        metadata: {
          ...cm.metadata,
          annotations: { ...annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION },
        },
        data,
      },
      { namespace: ns },
    );
  }
}

/** Registry entry. */
export const rootCaCertPublisherController: ControllerDescriptor = {
  name: 'root-ca-certificate-publisher-controller',
  aliases: ['root-ca-cert-publisher'],
  serviceAccount: 'root-ca-cert-publisher',
  async start(ctx) {
    new RootCaPublisher(ctx, await rootCaOf(ctx)).start();
  },
};
