/**
 * Pod defaults, as kube-apiserver applies them (`SetDefaults_Pod`, `SetDefaults_PodSpec`,
 * `SetDefaults_Container`, `SetDefaults_Probe`, the volume-source defaulters and the field
 * markers of `k8s.io/api/core/v1`), to a Pod and to every pod template.
 *
 * A Pod gets more than a template: `enableServiceLinks: true`, container requests copied from
 * limits, host ports mirrored from container ports under `hostNetwork`, and a negative
 * `terminationGracePeriodSeconds` made 1 (kube's v1 conversion). Templates are left
 * without those so that a Deployment's template reads back as the user wrote it.
 */
import { defaultPullPolicy } from './image.js';
import {
  defaultNonZero,
  defaultPointer,
  defaultString,
  eachObject,
  ensureObject,
  objectAt,
  type JsonObject,
} from './mutate.js';
import { canonicalizeQuantity, defaultResourceList } from './resources.js';
import { VOLUME_SOURCES } from '../validation/core/facts.js';

/** 0644, the default file mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_FILE_MODE = 420;

function defaultFieldRef(item: JsonObject): void {
  const fieldRef = objectAt(item, 'fieldRef');
  if (fieldRef !== undefined) defaultString(fieldRef, 'apiVersion', 'v1');
}

function defaultHTTPGet(handler: JsonObject | undefined): void {
  const httpGet = objectAt(handler, 'httpGet');
  if (httpGet === undefined) return;
  defaultString(httpGet, 'path', '/');
  defaultString(httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: JsonObject | undefined): void {
  if (probe === undefined) return;
  defaultNonZero(probe, 'timeoutSeconds', 1);
  defaultNonZero(probe, 'periodSeconds', 10);
  defaultNonZero(probe, 'successThreshold', 1);
  defaultNonZero(probe, 'failureThreshold', 3);
  defaultHTTPGet(probe);
  const grpc = objectAt(probe, 'grpc');
  if (grpc !== undefined) defaultPointer(grpc, 'service', '');
}

/** `SetDefaults_Container` plus the nested defaulters kube's generated code calls for it. */
export function defaultContainer(c: JsonObject): void {
  const policy = c['imagePullPolicy'];
  if (policy === undefined || policy === null || policy === '') {
    c['imagePullPolicy'] = defaultPullPolicy(typeof c['image'] === 'string' ? c['image'] : '');
  }
  defaultString(c, 'terminationMessagePath', '/dev/termination-log');
  defaultString(c, 'terminationMessagePolicy', 'File');
  eachObject(c, 'ports', (port) => defaultString(port, 'protocol', 'TCP'));
  eachObject(c, 'env', (env) => {
    const valueFrom = objectAt(env, 'valueFrom');
    if (valueFrom !== undefined) defaultFieldRef(valueFrom);
  });
  // ResourceRequirements is a struct, not a pointer: kube always writes `resources: {}`.
  const resources = ensureObject(c, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
  defaultProbe(objectAt(c, 'livenessProbe'));
  defaultProbe(objectAt(c, 'readinessProbe'));
  defaultProbe(objectAt(c, 'startupProbe'));
  const lifecycle = objectAt(c, 'lifecycle');
  defaultHTTPGet(objectAt(lifecycle, 'postStart'));
  defaultHTTPGet(objectAt(lifecycle, 'preStop'));
}

/** The PVC spec defaults shared by PVCs, StatefulSet claim templates and ephemeral volumes. */
export function defaultClaimSpec(spec: JsonObject): void {
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  const resources = objectAt(spec, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
}

function defaultVolumeSources(v: JsonObject): void {
  const hostPath = objectAt(v, 'hostPath');
  if (hostPath !== undefined) defaultPointer(hostPath, 'type', '');
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = objectAt(v, k);
    if (src !== undefined) defaultPointer(src, 'defaultMode', DEFAULT_FILE_MODE);
  }
  eachObject(objectAt(v, 'downwardAPI'), 'items', defaultFieldRef);
  eachObject(objectAt(v, 'projected'), 'sources', (source) => {
    eachObject(objectAt(source, 'downwardAPI'), 'items', defaultFieldRef);
    const token = objectAt(source, 'serviceAccountToken');
    if (token !== undefined) defaultPointer(token, 'expirationSeconds', 3600);
  });
  const emptyDir = objectAt(v, 'emptyDir');
  canonicalizeQuantity(emptyDir, 'sizeLimit');
  const iscsi = objectAt(v, 'iscsi');
  if (iscsi !== undefined) defaultString(iscsi, 'iscsiInterface', 'default');
  const rbd = objectAt(v, 'rbd');
  if (rbd !== undefined) {
    defaultString(rbd, 'pool', 'rbd');
    defaultString(rbd, 'user', 'admin');
    defaultString(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const azureDisk = objectAt(v, 'azureDisk');
  if (azureDisk !== undefined) {
    defaultPointer(azureDisk, 'cachingMode', 'ReadWrite');
    defaultPointer(azureDisk, 'fsType', 'ext4');
    defaultPointer(azureDisk, 'readOnly', false);
    defaultPointer(azureDisk, 'kind', 'Shared');
  }
  const scaleIO = objectAt(v, 'scaleIO');
  if (scaleIO !== undefined) {
    defaultString(scaleIO, 'storageMode', 'ThinProvisioned');
    defaultString(scaleIO, 'fsType', 'xfs');
  }
  const claimSpec = objectAt(objectAt(objectAt(v, 'ephemeral'), 'volumeClaimTemplate'), 'spec');
  if (claimSpec !== undefined) defaultClaimSpec(claimSpec);
}

function defaultVolume(v: JsonObject): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) v['emptyDir'] = {};
  defaultVolumeSources(v);
}

/**
 * kube's PodSpec conversion keeps the deprecated `serviceAccount` an alias of
 * `serviceAccountName` on every decode: the name takes the alias when it is empty, then the
 * alias takes the name.
 */
function aliasServiceAccount(spec: JsonObject): void {
  const name = spec['serviceAccountName'];
  const alias = spec['serviceAccount'];
  if (name !== undefined && name !== null && typeof name !== 'string') return;
  if (alias !== undefined && alias !== null && typeof alias !== 'string') return;
  const account = typeof name === 'string' && name !== '' ? name : typeof alias === 'string' ? alias : '';
  if (account === '') return;
  spec['serviceAccountName'] = account;
  spec['serviceAccount'] = account;
}

/** `SetDefaults_PodSpec` and everything nested in a pod spec (templates and Pods alike). */
export function defaultPodSpec(spec: JsonObject): void {
  aliasServiceAccount(spec);
  defaultString(spec, 'dnsPolicy', 'ClusterFirst');
  defaultString(spec, 'restartPolicy', 'Always');
  defaultPointer(spec, 'securityContext', {});
  defaultPointer(spec, 'terminationGracePeriodSeconds', 30);
  defaultString(spec, 'schedulerName', 'default-scheduler');
  eachObject(spec, 'volumes', defaultVolume);
  eachObject(spec, 'initContainers', defaultContainer);
  eachObject(spec, 'containers', defaultContainer);
  eachObject(spec, 'ephemeralContainers', defaultContainer);
  defaultResourceList(spec, 'overhead');
  const resources = objectAt(spec, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
}

/** Copies limits into absent requests (Pods only: templates keep what the user wrote). */
function defaultRequestsFromLimits(c: JsonObject): void {
  const resources = objectAt(c, 'resources');
  const limits = objectAt(resources, 'limits');
  if (resources === undefined || limits === undefined) return;
  const requests = ensureObject(resources, 'requests');
  if (requests === undefined) return;
  for (const [name, value] of Object.entries(limits)) {
    if (!(name in requests)) requests[name] = value;
  }
}

/** With host networking, container ports are host ports (Pods only). */
function defaultHostPorts(c: JsonObject): void {
  eachObject(c, 'ports', (port) => {
    if (port['hostPort'] === undefined || port['hostPort'] === null || port['hostPort'] === 0) {
      if (port['containerPort'] !== undefined) port['hostPort'] = port['containerPort'];
    }
  });
}

/** Defaults a whole Pod: the pod spec plus the Pod-only defaults (see module comment). */
export function defaultPod(pod: JsonObject): void {
  const spec = ensureObject(pod, 'spec');
  if (spec === undefined) return;
  defaultPodSpec(spec);
  eachObject(spec, 'containers', defaultRequestsFromLimits);
  eachObject(spec, 'initContainers', defaultRequestsFromLimits);
  defaultPointer(spec, 'enableServiceLinks', true);
  // kube's v1 → internal Pod conversion: a negative grace period is 1 (a pod's only, not a
  // template's, which keeps what it was given and is warned about).
  const grace = spec['terminationGracePeriodSeconds'];
  if (typeof grace === 'number' && grace < 0) spec['terminationGracePeriodSeconds'] = 1;
  if (spec['hostNetwork'] === true) {
    eachObject(spec, 'containers', defaultHostPorts);
    eachObject(spec, 'initContainers', defaultHostPorts);
  }
}

/**
 * Defaults a `PodTemplateSpec` held at `holder[k]` (Deployment `spec.template`, ...). As in
 * kube, where the template and its spec are structs, both are created when absent.
 */
export function defaultPodTemplateAt(holder: JsonObject | undefined, k = 'template'): void {
  if (holder === undefined) return;
  const template = ensureObject(holder, k);
  if (template === undefined) return;
  const spec = ensureObject(template, 'spec');
  if (spec !== undefined) defaultPodSpec(spec);
}
