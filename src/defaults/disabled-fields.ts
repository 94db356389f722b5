/**
 * Pod fields of features kube-apiserver v1.33 ships turned off (alpha, or beta off by default),
 * dropped on write as its `DropDisabledPodFields` and `DropDisabledTemplateFields` do: a client
 * that sends them gets the object without them, unless the stored object already used the
 * feature (an update may keep what is there). Capstan takes no `--feature-gates` for these, so
 * the v1.33 defaults are the only setting:
 *
 * - PodLevelResources: `spec.resources`;
 * - DynamicResourceAllocation: `spec.resourceClaims` and every container's `resources.claims`;
 * - ClusterTrustBundleProjection: a projected volume source's `clusterTrustBundle`;
 * - ImageVolume: `image` volumes, and the mounts that name them;
 * - ContainerStopSignals: a container's `lifecycle.stopSignal` (and the lifecycle it leaves
 *   empty).
 *
 * A pod's status loses, as kube's `dropDisabledPodStatusFields` drops them, on every write of it
 * (the status subresource's too):
 *
 * - DynamicResourceAllocation: `status.resourceClaimStatuses`, unless the stored spec has claims;
 * - ResourceHealthStatus: every container status's `allocatedResourcesStatus`;
 * - PodObservedGenerationTracking: `status.observedGeneration` and the conditions'
 *   `observedGeneration`, unless the stored status has one.
 */
import { POD_TEMPLATE_PATHS } from '../api/pod-templates.js';
import { isObject, obj, objectAtPath, objects } from '../validation/json.js';
import { nonEmpty, objectAt, type JsonObject } from './mutate.js';

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

function containersOf(spec: JsonObject): JsonObject[] {
  return CONTAINER_LISTS.flatMap((k) => objects(spec, k));
}

function podLevelResourcesInUse(spec: JsonObject | undefined): boolean {
  const r = objectAt(spec, 'resources');
  return nonEmpty(r, 'requests') || nonEmpty(r, 'limits');
}

function resourceClaimsInUse(spec: JsonObject | undefined): boolean {
  return nonEmpty(spec, 'resourceClaims');
}

function projections(spec: JsonObject): JsonObject[] {
  return objects(spec, 'volumes').flatMap((v) => objects(obj(v, 'projected'), 'sources'));
}

function trustBundlesInUse(spec: JsonObject | undefined): boolean {
  return spec !== undefined && projections(spec).some((s) => s['clusterTrustBundle'] != null);
}

function imageVolumesInUse(spec: JsonObject | undefined): boolean {
  return spec !== undefined && objects(spec, 'volumes').some((v) => v['image'] != null);
}

function stopSignalsInUse(spec: JsonObject | undefined): boolean {
  return spec !== undefined && containersOf(spec).some((c) => obj(c, 'lifecycle')?.['stopSignal'] != null);
}

/** Drops the disabled features' fields from `spec`, except those `old` already uses. */
export function dropDisabledPodSpecFields(spec: JsonObject, old: JsonObject | undefined): void {
  const containers = containersOf(spec);
  if (!podLevelResourcesInUse(old)) delete spec['resources'];
  if (!resourceClaimsInUse(old)) {
    delete spec['resourceClaims'];
    for (const c of containers) {
      const resources = obj(c, 'resources');
      if (resources !== undefined) delete resources['claims'];
    }
  }
  if (!trustBundlesInUse(old)) for (const s of projections(spec)) delete s['clusterTrustBundle'];
  if (!imageVolumesInUse(old) && Array.isArray(spec['volumes'])) {
    const volumes = spec['volumes'] as unknown[];
    const dropped = new Set(
      volumes.filter((v) => isObject(v) && v['image'] != null).map((v) => (v as JsonObject)['name']),
    );
    if (dropped.size > 0) {
      spec['volumes'] = volumes.filter((v) => !(isObject(v) && v['image'] != null));
      for (const c of containers)
        if (Array.isArray(c['volumeMounts']))
          c['volumeMounts'] = (c['volumeMounts'] as unknown[]).filter(
            (m) => !(isObject(m) && dropped.has(m['name'])),
          );
    }
  }
  if (!stopSignalsInUse(old)) {
    for (const c of containers) {
      const lifecycle = obj(c, 'lifecycle');
      if (lifecycle === undefined || !('stopSignal' in lifecycle)) continue;
      delete lifecycle['stopSignal'];
      if (Object.keys(lifecycle).length === 0) delete c['lifecycle'];
    }
  }
}

const CONTAINER_STATUS_LISTS = ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'];

function observedGenerationInUse(status: JsonObject | undefined): boolean {
  if (status === undefined) return false;
  const set = (o: JsonObject): boolean => o['observedGeneration'] != null && o['observedGeneration'] !== 0;
  return set(status) || objects(status, 'conditions').some(set);
}

/** Drops the disabled features' fields from a pod's `status`, given the stored pod's. */
export function dropDisabledPodStatusFields(
  status: JsonObject,
  oldStatus: JsonObject | undefined,
  oldSpec: JsonObject | undefined,
): void {
  if (!resourceClaimsInUse(oldSpec)) delete status['resourceClaimStatuses'];
  for (const list of CONTAINER_STATUS_LISTS)
    for (const c of objects(status, list)) delete c['allocatedResourcesStatus'];
  if (!observedGenerationInUse(oldStatus)) {
    delete status['observedGeneration'];
    for (const c of objects(status, 'conditions')) delete c['observedGeneration'];
  }
}

/**
 * Drops the disabled features' fields from the pod spec of `o` (a Pod, or a kind with a pod
 * template), and from a Pod's status, given the stored object on update.
 */
export function dropDisabledFields(
  group: string,
  kind: string,
  o: JsonObject,
  old: JsonObject | undefined,
): void {
  const key = `${group}/${kind}`;
  const template = POD_TEMPLATE_PATHS.get(key);
  if (key !== '/Pod' && template === undefined) return;
  const specPath = [...(template ?? []), 'spec'];
  const spec = objectAtPath(o, specPath);
  if (spec !== undefined) dropDisabledPodSpecFields(spec, objectAtPath(old, specPath));
  dropDisabledStatusFields(group, kind, o, old);
}

/**
 * Drops the disabled features' fields from a Pod's status (nothing for other kinds): all a
 * status write needs, as it keeps the stored spec.
 */
export function dropDisabledStatusFields(
  group: string,
  kind: string,
  o: JsonObject,
  old: JsonObject | undefined,
): void {
  const status = group === '' && kind === 'Pod' ? obj(o, 'status') : undefined;
  if (status !== undefined) dropDisabledPodStatusFields(status, obj(old, 'status'), obj(old, 'spec'));
}
