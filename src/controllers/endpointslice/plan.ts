/**
 * Turns a service's desired endpoint groups and its current slices into the creates, updates
 * and deletes that make them agree, packing at most `maxEndpointsPerSlice` endpoints in a
 * slice (kube's reconciler, simplified: existing slices keep the endpoints they hold, new
 * endpoints fill the slices already being changed, then any with room, then new slices).
 */
import type { Service } from '../../api/types/core-v1.js';
import type { Endpoint, EndpointSlice } from '../../api/types/discovery-v1.js';
import { addressTypesOf, groupKey, type EndpointGroup } from './desired.js';
import { LAST_CHANGE_TRIGGER_TIME } from './trigger-time.js';
import type { SlicePlan } from '../shared/slice-reconciler.js';

/** The label naming a slice's service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The label naming a slice's manager. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** This controller's value of {@link MANAGED_BY_LABEL}. */
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** Set (empty) on the slices and Endpoints of a headless service. */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

/** The labels a slice of `service` carries (kube's `setEndpointSliceLabels`). */
export function sliceLabels(service: Service): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.metadata.labels ?? {})) {
    if (k === SERVICE_NAME_LABEL || k === MANAGED_BY_LABEL) continue;
    labels[k] = v;
  }
  if (service.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  labels[SERVICE_NAME_LABEL] = service.metadata.name ?? '';
  labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;
  return labels;
}

/** JSON equality with object keys in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function endpointKey(ep: Endpoint): string {
  return (ep.addresses ?? []).join(',');
}

interface Working {
  slice: EndpointSlice;
  endpoints: Endpoint[];
  changed: boolean;
  isNew: boolean;
}

/**
 * The writes that bring `existing` (this controller's slices of `service`) to `groups`. With
 * no endpoints at all the service keeps one placeholder slice without endpoints or ports.
 */
export function planSlices(
  service: Service,
  existing: readonly EndpointSlice[],
  groups: readonly EndpointGroup[],
  maxEndpointsPerSlice: number,
  triggerTime: string | undefined,
): SlicePlan {
  const labels = sliceLabels(service);
  const work: Working[] = [];
  const deletes: EndpointSlice[] = [];
  const byGroup = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const key = groupKey(s.addressType ?? '', s.ports ?? []);
    byGroup.set(key, [...(byGroup.get(key) ?? []), s]);
  }
  const total = groups.reduce((n, g) => n + g.endpoints.length, 0);
  if (total === 0) {
    const placeholderKey = groupKey(addressTypesOf(service)[0] ?? 'IPv4', []);
    const keep = existing.find(
      (s) =>
        groupKey(s.addressType ?? '', s.ports ?? []) === placeholderKey && (s.endpoints ?? []).length === 0,
    );
    for (const s of existing) if (s !== keep) deletes.push(s);
    const w: Working =
      keep === undefined
        ? {
            slice: newSlice(service, labels, addressTypesOf(service)[0] ?? 'IPv4', []),
            endpoints: [],
            changed: true,
            isNew: true,
          }
        : { slice: keep, endpoints: [], changed: false, isNew: false };
    work.push(w);
    return finish(work, deletes, labels, triggerTime);
  }
  for (const group of groups) {
    const desired = new Map(group.endpoints.map((ep) => [endpointKey(ep), ep]));
    const mine: Working[] = [];
    for (const slice of byGroup.get(group.key) ?? []) {
      const kept: Endpoint[] = [];
      let changed = false;
      for (const ep of slice.endpoints ?? []) {
        const want = desired.get(endpointKey(ep));
        if (want === undefined) {
          changed = true;
          continue;
        }
        desired.delete(endpointKey(ep));
        if (!sameJson(want, ep)) changed = true;
        kept.push(want);
      }
      if (kept.length > maxEndpointsPerSlice) {
        kept.length = maxEndpointsPerSlice;
        changed = true;
      }
      mine.push({ slice, endpoints: kept, changed, isNew: false });
    }
    byGroup.delete(group.key);
    const rest = [...desired.values()];
    // Fill the slices already changing first, then any with room, then new slices.
    const order = [...mine.filter((w) => w.changed), ...mine.filter((w) => !w.changed)];
    for (const w of order) {
      while (rest.length > 0 && w.endpoints.length < maxEndpointsPerSlice) {
        const ep = rest.shift();
        if (ep === undefined) break;
        w.endpoints.push(ep);
        w.changed = true;
      }
    }
    while (rest.length > 0) {
      const chunk = rest.splice(0, maxEndpointsPerSlice);
      mine.push({
        slice: newSlice(service, labels, group.addressType, group.ports),
        endpoints: chunk,
        changed: true,
        isNew: true,
      });
    }
    for (const w of mine) {
      if (w.endpoints.length === 0) deletes.push(w.slice);
      else work.push(w);
    }
  }
  for (const rest of byGroup.values()) deletes.push(...rest);
  return finish(work, deletes, labels, triggerTime);
}

function newSlice(
  service: Service,
  labels: Record<string, string>,
  addressType: string,
  ports: EndpointSlice['ports'],
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${service.metadata.name ?? ''}-`,
      namespace: service.metadata.namespace ?? '',
      labels: { ...labels },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name: service.metadata.name ?? '',
          uid: service.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports: ports ?? [],
  };
}

function finish(
  work: readonly Working[],
  deletes: EndpointSlice[],
  labels: Record<string, string>,
  triggerTime: string | undefined,
): SlicePlan {
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  for (const w of work) {
    const labelsChanged = !sameJson(w.slice.metadata.labels ?? {}, labels);
    if (!w.changed && !labelsChanged) continue;
    const annotations = { ...(w.slice.metadata.annotations ?? {}) };
    if (triggerTime !== undefined) annotations[LAST_CHANGE_TRIGGER_TIME] = triggerTime;
    else delete annotations[LAST_CHANGE_TRIGGER_TIME];
    const slice: EndpointSlice = {
      ...w.slice,
      metadata: { ...w.slice.metadata, labels: { ...labels }, annotations },
      endpoints: w.endpoints,
    };
    (w.isNew ? create : update).push(slice);
  }
  return { create, update, delete: deletes };
}
