/**
 * AdmissionReview on the wire (admission.k8s.io v1 and v1beta1): the request a webhook is sent
 * (kube's `CreateV1AdmissionReview`, field for field) and the checks of its answer (kube's
 * `VerifyAdmissionResponse`: v1 answers must be `admission.k8s.io/v1` AdmissionReviews with the
 * request's uid; patches only from mutating webhooks, with their type; v1beta1 answers are taken
 * as they come, a patch being JSONPatch).
 */
import { randomUUID } from 'node:crypto';
import type { JsonObject, KubeObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';
import type { ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';

/** The review versions Capstan speaks, in kube's preference order of the webhook's list. */
const KNOWN_VERSIONS = new Set(['v1', 'v1beta1']);

/** The first of the webhook's `admissionReviewVersions` Capstan speaks. */
export function reviewVersion(versions: readonly string[]): 'v1' | 'v1beta1' | undefined {
  const v = versions.find((x) => KNOWN_VERSIONS.has(x));
  return v as 'v1' | 'v1beta1' | undefined;
}

/** The `request` of an AdmissionReview for `attrs`, sent as `type` (the invocation's resource). */
export function admissionRequest(
  uid: string,
  attrs: AdmissionAttributes,
  type: ResourceType,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
): JsonObject {
  const user = attrs.user;
  const userInfo: JsonObject = { username: user.name };
  if (user.uid !== '') userInfo['uid'] = user.uid;
  if (user.groups.length > 0) userInfo['groups'] = [...user.groups];
  if (Object.keys(user.extra).length > 0) userInfo['extra'] = user.extra;
  const request: JsonObject = {
    uid,
    kind: { group: type.group, version: type.version, kind: type.kind },
    resource: { group: type.group, version: type.version, resource: type.plural },
  };
  if (attrs.subresource !== undefined) request['subResource'] = attrs.subresource;
  request['requestKind'] = { group: attrs.type.group, version: attrs.type.version, kind: attrs.type.kind };
  request['requestResource'] = {
    group: attrs.type.group,
    version: attrs.type.version,
    resource: attrs.type.plural,
  };
  if (attrs.subresource !== undefined) request['requestSubResource'] = attrs.subresource;
  if (attrs.name !== '') request['name'] = attrs.name;
  // kube's request info names a Namespace's own namespace after it on the item path (not on create).
  const namespace =
    attrs.namespace === '' &&
    attrs.type.group === '' &&
    attrs.type.plural === 'namespaces' &&
    attrs.operation !== 'CREATE'
      ? attrs.name
      : attrs.namespace;
  if (namespace !== '') request['namespace'] = namespace;
  request['operation'] = attrs.operation;
  request['userInfo'] = userInfo;
  request['object'] = object ?? null;
  request['oldObject'] = oldObject ?? null;
  request['dryRun'] = attrs.dryRun;
  request['options'] = Object.keys(attrs.options).length === 0 ? null : attrs.options;
  return request;
}

/** A whole AdmissionReview (the body posted). */
export function admissionReview(version: 'v1' | 'v1beta1', request: JsonObject): JsonObject {
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request };
}

/** A fresh request uid. */
export function newReviewUid(): string {
  return randomUUID();
}

/** A webhook's answer, checked. */
export interface VerifiedResponse {
  readonly allowed: boolean;
  /** Decoded patch bytes (JSONPatch), or undefined. */
  readonly patch: Buffer | undefined;
  readonly patchType: string;
  /** `response.status` (a metav1.Status), when given. */
  readonly result: JsonObject | undefined;
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
}

/** The answer does not pass kube's checks; the message is kube's. */
export class InvalidResponseError extends Error {}

/** The answer to a decoding failure of `response.patch` (Go's []byte is base64). */
export class UndecodableResponseError extends Error {}

function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
  return `${group}/${version}, Kind=${kind}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBytes(v: unknown): Buffer | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new UndecodableResponseError('json: cannot unmarshal value into Go struct field of type []uint8');
  if (!BASE64.test(v)) throw new UndecodableResponseError('illegal base64 data at input byte 0');
  return Buffer.from(v, 'base64');
}

function stringMap(v: unknown): Record<string, string> {
  if (!isJsonObject(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/**
 * Checks a webhook's answer (kube's `VerifyAdmissionResponse`).
 * @throws InvalidResponseError (kube: "received invalid webhook response: ...")
 * @throws UndecodableResponseError (kube: a decoding failure of the call)
 */
export function verifyResponse(
  version: 'v1' | 'v1beta1',
  uid: string,
  mutating: boolean,
  body: unknown,
): VerifiedResponse {
  const review = isJsonObject(body) ? body : {};
  const response = review['response'];
  if (!isJsonObject(response)) throw new InvalidResponseError('webhook response was absent');
  const patch = decodeBytes(response['patch']);
  const result = isJsonObject(response['status']) ? response['status'] : undefined;
  const warnings = Array.isArray(response['warnings'])
    ? response['warnings'].filter((w): w is string => typeof w === 'string')
    : [];
  const auditAnnotations = stringMap(response['auditAnnotations']);
  const allowed = response['allowed'] === true;
  if (version === 'v1beta1') {
    return {
      allowed,
      patch: mutating && patch !== undefined && patch.length > 0 ? patch : undefined,
      patchType: mutating && patch !== undefined && patch.length > 0 ? 'JSONPatch' : '',
      result,
      warnings,
      auditAnnotations,
    };
  }
  const gotUid = typeof response['uid'] === 'string' ? response['uid'] : '';
  if (gotUid !== uid) throw new InvalidResponseError(`expected response.uid="${uid}", got "${gotUid}"`);
  const apiVersion = typeof review['apiVersion'] === 'string' ? review['apiVersion'] : '';
  const kind = typeof review['kind'] === 'string' ? review['kind'] : '';
  if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
    throw new InvalidResponseError(
      `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvkString(apiVersion, kind)}`,
    );
  }
  const rawType = response['patchType'];
  const hasType = rawType !== undefined && rawType !== null;
  const hasPatch = patch !== undefined && patch.length > 0;
  if (mutating) {
    if (hasPatch && !hasType)
      throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
    if (!hasPatch && hasType)
      throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
    const patchType = typeof rawType === 'string' ? rawType : '';
    if (hasType && patchType === '')
      throw new InvalidResponseError(`webhook returned invalid response.patchType of ""`);
    return { allowed, patch: hasPatch ? patch : undefined, patchType, result, warnings, auditAnnotations };
  }
  if (hasPatch) throw new InvalidResponseError('validating webhook may not return response.patch');
  if (hasType) throw new InvalidResponseError('validating webhook may not return response.patchType');
  return { allowed, patch: undefined, patchType: '', result, warnings, auditAnnotations };
}
