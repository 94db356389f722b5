/**
 * Which Services a pod belongs to, for the endpoints controllers' pod handlers: the services
 * of the pod's namespace whose `spec.selector` matches its labels (before or after a change).
 */
import type { Pod, Service } from '../../api/types/core-v1.js';
import type { Indexer } from '../../client/index.js';
import { keyOf } from '../shared/meta.js';

/**
 * True when the controllers give `service` endpoints: it has a selector (even an empty one,
 * which selects every pod, as kube) and is not an ExternalName service.
 */
export function hasEndpointsFromSelector(service: Service): boolean {
  const selector = service.spec?.selector;
  return selector !== undefined && selector !== null && service.spec?.type !== 'ExternalName';
}

/** Whether `labels` match the service's selector (every key equal). */
export function selects(service: Service, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(service.spec?.selector ?? {}).every(([k, v]) => labels?.[k] === v);
}

/** Keys of the services selecting `pod` now or (with `old`) before. */
export function servicesOfPod(services: Indexer<Service>, pod: Pod, old?: Pod): string[] {
  const out: string[] = [];
  for (const svc of services.byIndex('namespace', pod.metadata.namespace ?? '')) {
    if (!hasEndpointsFromSelector(svc)) continue;
    if (selects(svc, pod.metadata.labels) || (old !== undefined && selects(svc, old.metadata.labels))) {
      out.push(keyOf(svc.metadata));
    }
  }
  return out;
}

/** The pods of `service`'s namespace its selector matches. */
export function podsOfService(pods: Indexer<Pod>, service: Service): Pod[] {
  return pods
    .byIndex('namespace', service.metadata.namespace ?? '')
    .filter((p) => selects(service, p.metadata.labels));
}
