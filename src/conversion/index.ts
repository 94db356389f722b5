/**
 * Conversion between the served versions of a kind that share storage (kube's conversion
 * functions). A type has a conversion when objects of another apiVersion can be stored under its
 * storage resource; {@link conversionTo} gives the function that brings any such object to the
 * type's own form (objects already in it pass through unchanged).
 */
import type { KubeObject } from '../api/object.js';
import { CORE_EVENT_API_VERSION, EVENTS_API_VERSION, eventFromCore, eventToCore } from './events.js';

/** Brings an object read from shared storage to one type's form. */
export type Conversion = (obj: KubeObject) => KubeObject;

/** What identifies a type here. */
export interface ConvertedType {
  readonly group: string;
  readonly kind: string;
}

const toCoreEvent: Conversion = (obj) =>
  obj.kind === 'Event' && obj.apiVersion === EVENTS_API_VERSION ? eventToCore(obj) : obj;

const toEventsEvent: Conversion = (obj) =>
  obj.kind === 'Event' && obj.apiVersion === CORE_EVENT_API_VERSION ? eventFromCore(obj) : obj;

/**
 * The conversion into `type`'s form of objects stored by its storage siblings, or undefined when
 * every stored object of its storage resource is already in its form.
 */
export function conversionTo(type: ConvertedType): Conversion | undefined {
  if (type.kind !== 'Event') return undefined;
  if (type.group === '') return toCoreEvent;
  if (type.group === 'events.k8s.io') return toEventsEvent;
  return undefined;
}

/**
 * The storage form of `obj` (kube's storage version): events.k8s.io/v1 Events are stored as core
 * v1 Events, as kube-apiserver stores them; everything else as it is.
 */
export function toStorageVersion(obj: KubeObject): KubeObject {
  return toCoreEvent(obj);
}

export { eventFromCore, eventToCore } from './events.js';
