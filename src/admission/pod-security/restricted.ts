/** The restricted level's checks (kube's pod-security-admission policy), over pod JSON. */
import {
  arr,
  containers,
  containersPhrase,
  cname,
  fail,
  joinQuote,
  obj,
  pluralize,
  podSc,
  sc,
  sorted,
  str,
  type CheckFn,
} from './helpers.js';

export const allowPrivilegeEscalation: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => sc(c)?.['allowPrivilegeEscalation'] !== false)
    .map(cname);
  if (bad.length === 0) return undefined;
  return fail(
    'allowPrivilegeEscalation != false',
    `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  );
};

export const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const forbiddenCaps = new Set<string>();
  for (const c of containers(spec)) {
    const caps = obj(sc(c)?.['capabilities']);
    if (caps === undefined) {
      missingDrop.push(cname(c));
      continue;
    }
    const drop = Array.isArray(caps['drop']) ? (caps['drop'] as unknown[]) : [];
    if (!drop.includes('ALL')) missingDrop.push(cname(c));
    const add = Array.isArray(caps['add']) ? (caps['add'] as unknown[]) : [];
    let added = false;
    for (const cap of add) {
      if (cap !== 'NET_BIND_SERVICE') {
        added = true;
        forbiddenCaps.add(str(cap));
      }
    }
    if (added) adding.push(cname(c));
  }
  const details: string[] = [];
  if (missingDrop.length > 0) {
    details.push(`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  }
  if (adding.length > 0) {
    details.push(
      `${containersPhrase(adding)} must not include ${joinQuote(sorted(forbiddenCaps))} in securityContext.capabilities.add`,
    );
  }
  return details.length === 0 ? undefined : fail('unrestricted capabilities', details.join('; '));
};

/** Volume sources restricted allows. */
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
/** The restricted sources kube names, in its order of precedence. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

export const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of arr(spec['volumes'])) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => obj(v[s]) !== undefined)) continue;
    bad.push(str(v['name']));
    types.add(RESTRICTED_VOLUME_SOURCES.find((s) => obj(v[s]) !== undefined) ?? 'unknown');
  }
  if (bad.length === 0) return undefined;
  const list = sorted(types);
  return fail(
    'restricted volume types',
    `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', list.length)} ${joinQuote(list)}`,
  );
};

export const runAsNonRoot: CheckFn = (_meta, spec) => {
  const badSetters: string[] = [];
  let podNonRoot = false;
  const podValue = podSc(spec)?.['runAsNonRoot'];
  if (typeof podValue === 'boolean') {
    if (!podValue) badSetters.push('pod');
    else podNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const v = sc(c)?.['runAsNonRoot'];
    if (typeof v === 'boolean') {
      if (!v) explicit.push(cname(c));
    } else if (!podNonRoot) implicit.push(cname(c));
  }
  if (explicit.length > 0) badSetters.push(containersPhrase(explicit));
  if (badSetters.length > 0) {
    return fail(
      'runAsNonRoot != true',
      `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    );
  }
  if (implicit.length > 0) {
    return fail(
      'runAsNonRoot != true',
      `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    );
  }
  return undefined;
};

export const runAsUser: CheckFn = (_meta, spec) => {
  const badSetters: string[] = [];
  if (podSc(spec)?.['runAsUser'] === 0) badSetters.push('pod');
  const bad = containers(spec)
    .filter((c) => sc(c)?.['runAsUser'] === 0)
    .map(cname);
  if (bad.length > 0) badSetters.push(containersPhrase(bad));
  if (badSetters.length === 0) return undefined;
  return fail('runAsUser=0', `${badSetters.join(' and ')} must not set runAsUser=0`);
};
