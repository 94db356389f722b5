/**
 * The writes that make the mirrored EndpointSlices of an Endpoints match it (kube's mirroring
 * reconciler): per address type and port list, one slice holding every desired endpoint (the
 * first existing slice is kept and rewritten when its endpoints, labels or annotations differ;
 * any others are deleted); groups no longer desired lose their slices; a create is turned into
 * an update of a slice about to be deleted when their address types match.
 */
import type { Endpoints } from '../../api/types/core-v1.js';
import type { EndpointPort, EndpointSlice } from '../../api/types/discovery-v1.js';
import { LAST_APPLIED_CONFIG_ANNOTATION } from '../../api/annotations.js';
import { groupKey } from '../endpointslice/desired.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL, sameJson } from '../endpointslice/plan.js';
import { LAST_CHANGE_TRIGGER_TIME } from '../endpointslice/trigger-time.js';
import { endpointIdentity, type DesiredMirror, type MirrorGroup } from './desired.js';
import type { SlicePlan } from '../shared/slice-reconciler.js';

/** This controller's value of the managed-by label. */
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';

function without(
  map: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> {
  const out = { ...(map ?? {}) };
  for (const k of keys) delete out[k];
  return out;
}

/** The annotations a mirrored slice carries: the Endpoints' but the trigger time and kubectl's. */
function mirroredAnnotations(endpoints: Endpoints): Record<string, string> {
  return without(endpoints.metadata.annotations, [LAST_CHANGE_TRIGGER_TIME, LAST_APPLIED_CONFIG_ANNOTATION]);
}

function newSlice(
  endpoints: Endpoints,
  ports: EndpointPort[],
  addressType: string,
  name: string | undefined,
): EndpointSlice {
  const epName = endpoints.metadata.name ?? '';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...(name === undefined ? { generateName: `${epName}-` } : { name }),
      namespace: endpoints.metadata.namespace ?? '',
      labels: {
        ...(endpoints.metadata.labels ?? {}),
        [SERVICE_NAME_LABEL]: epName,
        [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME,
      },
      annotations: mirroredAnnotations(endpoints),
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Endpoints',
          name: epName,
          uid: endpoints.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

/** True when `slice` already holds exactly `group`'s endpoints. */
function holds(slice: EndpointSlice, group: MirrorGroup): boolean {
  const existing = slice.endpoints ?? [];
  if (existing.length !== group.endpoints.size) return false;
  return existing.every((ep) => {
    const want = group.endpoints.get(endpointIdentity(ep));
    return want !== undefined && sameJson(want, ep);
  });
}

function byGroup(
  endpoints: Endpoints,
  existing: readonly EndpointSlice[],
  group: MirrorGroup,
  maxPerSubset: number,
): SlicePlan {
  if (group.endpoints.size === 0) return { create: [], update: [], delete: [...existing] };
  const [first, ...rest] = existing;
  if (first !== undefined) {
    const labels = without(first.metadata.labels, [MANAGED_BY_LABEL, SERVICE_NAME_LABEL]);
    const same =
      holds(first, group) &&
      sameJson(endpoints.metadata.labels ?? {}, labels) &&
      sameJson(mirroredAnnotations(endpoints), first.metadata.annotations ?? {});
    if (same) return { create: [], update: [], delete: rest };
  }
  const slice = newSlice(endpoints, group.ports, group.addressType, first?.metadata.name);
  slice.endpoints = [...group.endpoints.values()].slice(0, maxPerSubset);
  return first === undefined
    ? { create: [slice], update: [], delete: rest }
    : {
        create: [],
        update: [{ ...slice, metadata: { ...first.metadata, ...slice.metadata } }],
        delete: rest,
      };
}

/** The plan for `endpoints` given its mirrored slices and its desired state. */
export function planMirror(
  endpoints: Endpoints,
  existing: readonly EndpointSlice[],
  desired: DesiredMirror,
  maxPerSubset: number,
): SlicePlan {
  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const key = groupKey(s.addressType ?? '', s.ports ?? []);
    existingByKey.set(key, [...(existingByKey.get(key) ?? []), s]);
  }
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  const deletes: EndpointSlice[] = [];
  for (const [key, group] of desired.groups) {
    const p = byGroup(endpoints, existingByKey.get(key) ?? [], group, maxPerSubset);
    create.push(...p.create);
    update.push(...p.update);
    deletes.push(...p.delete);
  }
  for (const [key, slices] of existingByKey) if (!desired.groups.has(key)) deletes.push(...slices);
  // Recycle: a slice about to be deleted becomes the one about to be created, per address type.
  for (const type of ['IPv4', 'IPv6']) {
    const creates = create.filter((s) => s.addressType === type);
    const removals = deletes.filter((s) => s.addressType === type);
    for (let i = 0; i < creates.length && i < removals.length; i++) {
      const made = creates[i];
      const old = removals[i];
      if (made === undefined || old === undefined) break;
      create.splice(create.indexOf(made), 1);
      deletes.splice(deletes.indexOf(old), 1);
      const { generateName: _generated, ...meta } = made.metadata;
      update.push({ ...made, metadata: { ...old.metadata, ...meta, name: old.metadata.name ?? '' } });
    }
  }
  return { create, update, delete: deletes };
}
