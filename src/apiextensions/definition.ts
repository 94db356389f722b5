/**
 * A CustomResourceDefinition (apiextensions.k8s.io/v1) as the serving side reads it: names,
 * scope, versions with their schema, subresources and printer columns, conversion, status. The
 * object was validated before it was stored (src/validation/apiextensions.ts), so reading is
 * lenient: a missing part reads as empty.
 */
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import type { PrinterColumn } from '../table/printer-columns.js';
import type { ScalePaths } from '../kinds/index.js';
import { storageVersionHash, type ResourceType, type Subresource } from '../registry/types.js';

/** `spec.names` or `status.acceptedNames`: the names a served {@link ResourceType} carries. */
export type CrdNames = Pick<
  ResourceType,
  'plural' | 'singular' | 'kind' | 'listKind' | 'shortNames' | 'categories'
>;

/** One `spec.versions[]` entry. */
export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly schema: JsonObject | undefined;
  readonly status: boolean;
  readonly scale: ScalePaths | undefined;
  readonly columns: readonly PrinterColumn[];
  readonly selectableFields: readonly string[];
}

/** `spec.conversion`. */
export interface CrdConversion {
  readonly strategy: 'None' | 'Webhook';
  /** `webhook.clientConfig`. */
  readonly clientConfig: JsonObject | undefined;
  readonly reviewVersions: readonly string[];
}

/** One `status.conditions[]` entry. */
export interface CrdCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The serving side's view of a CRD. */
export interface Definition {
  readonly name: string;
  readonly group: string;
  readonly namespaced: boolean;
  readonly names: CrdNames;
  readonly acceptedNames: CrdNames;
  readonly versions: readonly CrdVersion[];
  readonly conversion: CrdConversion;
  readonly preserveUnknownFields: boolean;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly conditions: readonly CrdCondition[];
  readonly storedVersions: readonly string[];
}

function obj(v: unknown): JsonObject {
  return isJsonObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

function namesOf(v: unknown): CrdNames {
  const n = obj(v);
  const kind = str(n['kind']);
  return {
    plural: str(n['plural']),
    singular: str(n['singular']),
    kind,
    listKind: str(n['listKind']),
    shortNames: strings(n['shortNames']),
    categories: strings(n['categories']),
  };
}

function columnsOf(v: unknown): PrinterColumn[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isJsonObject).map((c) => ({
    name: str(c['name']),
    type: str(c['type']),
    ...(typeof c['format'] === 'string' ? { format: c['format'] } : {}),
    ...(typeof c['description'] === 'string' ? { description: c['description'] } : {}),
    ...(typeof c['priority'] === 'number' ? { priority: c['priority'] } : {}),
    jsonPath: str(c['jsonPath']),
  }));
}

function versionOf(v: JsonObject): CrdVersion {
  const sub = obj(v['subresources']);
  const scale = isJsonObject(sub['scale']) ? sub['scale'] : undefined;
  const schema = obj(v['schema'])['openAPIV3Schema'];
  return {
    name: str(v['name']),
    served: v['served'] === true,
    storage: v['storage'] === true,
    schema: isJsonObject(schema) ? schema : undefined,
    status: isJsonObject(sub['status']),
    scale:
      scale === undefined
        ? undefined
        : {
            specReplicasPath: str(scale['specReplicasPath']),
            statusReplicasPath: str(scale['statusReplicasPath']),
            ...(typeof scale['labelSelectorPath'] === 'string'
              ? { labelSelectorPath: scale['labelSelectorPath'] }
              : {}),
          },
    columns: columnsOf(v['additionalPrinterColumns']),
    selectableFields: Array.isArray(v['selectableFields'])
      ? v['selectableFields'].filter(isJsonObject).map((f) => str(f['jsonPath']))
      : [],
  };
}

/** Reads a stored CRD object. */
export function readDefinition(crd: KubeObject): Definition {
  const spec = obj(crd['spec']);
  const status = obj(crd['status']);
  const conversion = obj(spec['conversion']);
  const webhook = obj(conversion['webhook']);
  return {
    name: crd.metadata.name ?? '',
    group: str(spec['group']),
    namespaced: spec['scope'] !== 'Cluster',
    names: namesOf(spec['names']),
    acceptedNames: namesOf(status['acceptedNames']),
    versions: Array.isArray(spec['versions']) ? spec['versions'].filter(isJsonObject).map(versionOf) : [],
    conversion: {
      strategy: conversion['strategy'] === 'Webhook' ? 'Webhook' : 'None',
      clientConfig: isJsonObject(webhook['clientConfig']) ? webhook['clientConfig'] : undefined,
      reviewVersions: strings(webhook['conversionReviewVersions']),
    },
    preserveUnknownFields: spec['preserveUnknownFields'] === true,
    deleting: typeof crd.metadata.deletionTimestamp === 'string' && crd.metadata.deletionTimestamp !== '',
    finalizers: crd.metadata.finalizers ?? [],
    conditions: Array.isArray(status['conditions'])
      ? status['conditions'].filter(isJsonObject).map((c) => ({ ...c }) as unknown as CrdCondition)
      : [],
    storedVersions: strings(status['storedVersions']),
  };
}

/** The storage version's name (the one with `storage: true`). */
export function storageVersionOf(def: Definition): string | undefined {
  return def.versions.find((v) => v.storage)?.name;
}

/** The condition of `type`, if any. */
export function conditionOf(def: Definition, type: string): CrdCondition | undefined {
  return def.conditions.find((c) => c.type === type);
}

/** True when the condition of `type` is `True`. */
export function isTrue(def: Definition, type: string): boolean {
  return conditionOf(def, type)?.status === 'True';
}

/** A custom resource's verbs, in the order kube's discovery lists them. */
const VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

/**
 * The served types of `def` under its accepted names: one per served version, all stored under
 * `<group>/<plural>` as kube lays custom resources out.
 */
export function servedTypes(def: Definition): ResourceType[] {
  const n = def.acceptedNames;
  const stored = storageVersionOf(def);
  const hash =
    stored === undefined ? {} : { storageVersionHash: storageVersionHash(def.group, stored, n.kind) };
  return def.versions
    .filter((v) => v.served)
    .map((v): ResourceType => {
      const subresources: Subresource[] = [];
      if (v.status) subresources.push('status');
      if (v.scale !== undefined) subresources.push('scale');
      return {
        group: def.group,
        version: v.name,
        apiVersion: `${def.group}/${v.name}`,
        kind: n.kind,
        listKind: n.listKind || `${n.kind}List`,
        plural: n.plural,
        singular: n.singular || n.kind.toLowerCase(),
        namespaced: def.namespaced,
        shortNames: n.shortNames,
        categories: n.categories,
        verbs: VERBS,
        subresources,
        storageResource: `${def.group}/${n.plural}`,
        messageType: '',
        virtual: false,
        tracksGeneration: true,
        createOnUpdate: false,
        keepStatusOnCreate: false,
        returnDeletedObject: false,
        nameRule: 'subdomain',
        eventTTL: false,
        ...hash,
      };
    });
}
