/**
 * The list blueprint of a WatchList stream (kube v1.33): the initial-events-end bookmark carries,
 * base64-encoded under `kubernetes.io/initial-events-list-blueprint`, the empty list of the
 * request's type as the stream's negotiated encoder writes it, so a client (client-go's
 * `List` through the stream) builds its list result from it without a LIST.
 *
 * kube encodes the versioned empty list (`NewList()` converted to the request's version): for a
 * built-in kind in JSON `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":null}` plus the
 * encoder's newline; for a custom resource (an unstructured list) `{"apiVersion":...,
 * "items":[],"kind":...}` plus the newline; in protobuf the enveloped list with an empty
 * ListMeta and no items; as PartialObjectMetadata the empty `PartialObjectMetadataList`.
 */
import { Buffer } from 'node:buffer';
import type { RepresentedType } from './types.js';

/** The annotation on the initial-events-end bookmark. */
export const LIST_BLUEPRINT_ANNOTATION = 'kubernetes.io/initial-events-list-blueprint';

/** True for a type served as unstructured (custom resources: no protobuf message). */
export function isUnstructured(type: RepresentedType): boolean {
  const messageType = (type as { readonly messageType?: unknown }).messageType;
  return typeof messageType === 'string' && messageType === '';
}

/** The JSON blueprint of `type` (see the module comment). */
export function jsonListBlueprint(type: RepresentedType): Uint8Array {
  const kind = JSON.stringify(type.listKind);
  const apiVersion = JSON.stringify(type.apiVersion);
  const text = isUnstructured(type)
    ? `{"apiVersion":${apiVersion},"items":[],"kind":${kind}}\n`
    : `{"kind":${kind},"apiVersion":${apiVersion},"metadata":{},"items":null}\n`;
  return Buffer.from(text);
}

/** The annotation value: the blueprint's bytes in standard base64. */
export function blueprintAnnotation(blueprint: Uint8Array): string {
  return Buffer.from(blueprint.buffer, blueprint.byteOffset, blueprint.byteLength).toString('base64');
}
