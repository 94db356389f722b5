/**
 * Conversion between the served versions of a kind that share storage (kube's conversion
 * functions). A type has a conversion when objects of another apiVersion can be stored under its
 * storage resource; {@link conversionTo} gives the function that brings any such object to the
 * type's own form (objects already in it pass through unchanged).
 *
 * The pairs, as `proto/kinds.yaml` lays out storage (every kind sharing a `storageResource`):
 * - core `v1` ↔ `events.k8s.io/v1` Event (stored as core v1, events.ts);
 * - `autoscaling/v2` ↔ `autoscaling/v1` HorizontalPodAutoscaler (stored as v2, hpa.ts).
 */
import type { KubeObject } from '../api/object.js';
import { CORE_EVENT_API_VERSION, EVENTS_API_VERSION, eventFromCore, eventToCore } from './events.js';
import { HPA_V1, HPA_V2, hpaToV1, hpaToV2 } from './hpa.js';

/** Brings an object read from shared storage to one type's form. */
export type Conversion = (obj: KubeObject) => KubeObject;

/** What identifies a type here. */
export interface ConvertedType {
  readonly group: string;
  /** `v1` or `group/version` (a type without it gets its kind's storage form). */
  readonly apiVersion?: string;
  readonly kind: string;
}

const toCoreEvent: Conversion = (obj) =>
  obj.kind === 'Event' && obj.apiVersion === EVENTS_API_VERSION ? eventToCore(obj) : obj;

const toEventsEvent: Conversion = (obj) =>
  obj.kind === 'Event' && obj.apiVersion === CORE_EVENT_API_VERSION ? eventFromCore(obj) : obj;

const toHpaV2: Conversion = (obj) =>
  obj.kind === 'HorizontalPodAutoscaler' && obj.apiVersion === HPA_V1 ? hpaToV2(obj) : obj;

const toHpaV1: Conversion = (obj) =>
  obj.kind === 'HorizontalPodAutoscaler' && obj.apiVersion === HPA_V2 ? hpaToV1(obj) : obj;

/**
 * The conversion into `type`'s form of objects stored by its storage siblings, or undefined when
 * every stored object of its storage resource is already in its form.
 */
export function conversionTo(type: ConvertedType): Conversion | undefined {
  if (type.kind === 'Event') {
    if (type.group === '') return toCoreEvent;
    if (type.group === 'events.k8s.io') return toEventsEvent;
    return undefined;
  }
  if (type.kind === 'HorizontalPodAutoscaler' && type.group === 'autoscaling') {
    return type.apiVersion === HPA_V1 ? toHpaV1 : toHpaV2;
  }
  return undefined;
}

/**
 * The storage form of `obj` (kube's storage version): events.k8s.io/v1 Events are stored as core
 * v1 Events and autoscaling/v1 HorizontalPodAutoscalers as autoscaling/v2 ones, as kube-apiserver
 * stores them; everything else as it is.
 */
export function toStorageVersion(obj: KubeObject): KubeObject {
  return toHpaV2(toCoreEvent(obj));
}

export { eventFromCore, eventToCore } from './events.js';
export { hpaToV1, hpaToV2 } from './hpa.js';
