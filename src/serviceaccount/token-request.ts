/**
 * The TokenRequest endpoint, POST `/api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, as
 * kube-apiserver's `TokenREST`: the body is an `authentication.k8s.io/v1` TokenRequest; the answer
 * (201) is the request with `status.token` and `status.expirationTimestamp`.
 *
 * Steps, each with kube's error: body name/namespace must match the URL (422); the service
 * account must exist (404); audiences default to `--api-audiences`; `expirationSeconds` (default
 * 3600) must be within [600 s, 2^32 s] (422); a `boundObjectRef` must name an existing Pod
 * (running as this account, else 400), Secret or Node (404), other kinds are 400, and a given uid
 * must match (409). `--service-account-max-token-expiration` shortens longer requests; with
 * `--service-account-extend-token-expiration`, a pod-bound token for the API's own audiences asking
 * for 3607 s (what the kubelet asks for projected volumes) is valid for a year and carries
 * `warnafter` at 3607 s.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, badRequest, conflict, invalid, notFound } from '../api/errors.js';
import type { CustomEndpoint, EndpointCall } from '../http/resource-routes.js';
import { admissionAttributes } from '../resource/admission.js';
import type { ResourceReply } from '../resource/context.js';
import { isJsonObject, rfc3339Seconds, type JsonObject, type KubeObject } from '../api/object.js';
import { boundClaims, type ObjectRefClaim } from './claims.js';
import type { TokenIssuer } from './issuer.js';
import type { ObjectGetter } from './lookup.js';

/** Kube's `WarnOnlyBoundTokenExpirationSeconds`: the kubelet's request for projected tokens. */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
/** Kube's `ExpirationExtensionSeconds`: one year. */
export const EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 60 * 60;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const DEFAULT_EXPIRATION_SECONDS = 3600;

/** How tokens are requested. */
export interface TokenRequestOptions {
  readonly issuer: TokenIssuer;
  readonly objects: ObjectGetter;
  /** `--api-audiences` (never empty: defaults to the issuers). */
  readonly apiAudiences: readonly string[];
  /** `--service-account-max-token-expiration` in seconds (0: no limit). */
  readonly maxExpirationSeconds: number;
  /** `--service-account-extend-token-expiration`. */
  readonly extendExpiration: boolean;
  readonly now?: () => Date;
}

const GROUP = 'authentication.k8s.io';

function fieldInvalid(field: string, value: unknown, why: string): ApiError {
  return invalid('TokenRequest', GROUP, '', [
    { field, message: `Invalid value: ${JSON.stringify(value)}: ${why}` },
  ]);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((a): a is string => typeof a === 'string') : [];
}

/** The serviceaccounts/token endpoint (key `/serviceaccounts/token`). */
export function tokenRequestEndpoint(options: TokenRequestOptions): CustomEndpoint {
  const now = options.now ?? ((): Date => new Date());
  return {
    methods: ['POST'],
    messageType: 'k8s.io.api.authentication.v1.TokenRequest',
    handle: (call) => createToken(options, now, call),
  };
}

async function createToken(
  o: TokenRequestOptions,
  now: () => Date,
  call: EndpointCall,
): Promise<ResourceReply> {
  const namespace = call.target.namespace ?? '';
  const name = call.target.name ?? '';
  if (!isJsonObject(call.body)) throw badRequest('the request body must be a TokenRequest object');
  const body = call.body;
  const meta = isJsonObject(body['metadata']) ? body['metadata'] : {};
  const spec = isJsonObject(body['spec']) ? body['spec'] : {};
  const metaName = typeof meta['name'] === 'string' ? meta['name'] : '';
  const metaNs = typeof meta['namespace'] === 'string' ? meta['namespace'] : '';
  if (metaName !== '' && metaName !== name) {
    throw invalid('TokenRequest', GROUP, name, [
      {
        field: 'metadata.name',
        message: `Invalid value: ${JSON.stringify(metaName)}: must match the service account name if specified`,
      },
    ]);
  }
  if (metaNs !== '' && metaNs !== namespace) {
    throw invalid('TokenRequest', GROUP, name, [
      {
        field: 'metadata.namespace',
        message: `Invalid value: ${JSON.stringify(metaNs)}: must match the service account namespace if specified`,
      },
    ]);
  }
  const sa = await o.objects.get('ServiceAccount', namespace, name);
  if (sa === undefined) throw notFound({ resource: 'serviceaccounts', group: '', name });
  let audiences = stringList(spec['audiences']);
  if (audiences.length === 0) audiences = [...o.apiAudiences];
  const rawExp = spec['expirationSeconds'];
  let expirationSeconds =
    rawExp === undefined || rawExp === null ? DEFAULT_EXPIRATION_SECONDS : Number(rawExp);
  if (!Number.isInteger(expirationSeconds)) {
    throw fieldInvalid('spec.expirationSeconds', rawExp, 'must be an integer');
  }
  const issuedAt = now();
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw fieldInvalid(
      'spec.expirationSeconds',
      expirationSeconds,
      'may not specify a duration less than 10 minutes',
    );
  }
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) {
    throw fieldInvalid(
      'spec.expirationSeconds',
      expirationSeconds,
      'may not specify a duration larger than 2^32 seconds',
    );
  }
  await admit(call, namespace, name, body);
  const bound = await resolveBound(o, namespace, name, spec['boundObjectRef']);
  if (o.maxExpirationSeconds > 0 && expirationSeconds > o.maxExpirationSeconds) {
    expirationSeconds = o.maxExpirationSeconds;
  }
  let lifetime = expirationSeconds;
  let warnAfter = 0;
  if (
    o.extendExpiration &&
    bound.pod !== undefined &&
    expirationSeconds === WARN_ONLY_EXPIRATION_SECONDS &&
    audiences.every((a) => o.apiAudiences.includes(a))
  ) {
    warnAfter = expirationSeconds;
    lifetime = EXTENDED_EXPIRATION_SECONDS;
  }
  const token = await o.issuer.sign(
    boundClaims({
      namespace,
      serviceAccount: { name, uid: sa.metadata.uid ?? '' },
      audiences,
      expirationSeconds: lifetime,
      warnAfterSeconds: warnAfter,
      ...bound,
      jti: randomUUID(),
      now: issuedAt,
    }),
  );
  const answer = {
    kind: 'TokenRequest',
    apiVersion: `${GROUP}/v1`,
    metadata: { name, namespace, creationTimestamp: rfc3339Seconds(issuedAt) },
    spec: {
      audiences,
      expirationSeconds,
      boundObjectRef: isJsonObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : null,
    },
    status: {
      token,
      expirationTimestamp: rfc3339Seconds(new Date(issuedAt.getTime() + expirationSeconds * 1000)),
    },
  };
  return { code: 201, body: Buffer.from(JSON.stringify(answer)) };
}

interface Bound {
  pod?: ObjectRefClaim;
  secret?: ObjectRefClaim;
  node?: ObjectRefClaim;
}

/**
 * Runs admission on the request as kube does for `serviceaccounts/token` creates: the mutating
 * and validating plugins (NodeRestriction, webhooks and policies matching the subresource) see
 * a CREATE of the TokenRequest.
 */
async function admit(call: EndpointCall, namespace: string, name: string, body: JsonObject): Promise<void> {
  const type = call.ctx.registry.byResource('', 'v1', 'serviceaccounts');
  if (type === undefined) return;
  const attrs = admissionAttributes({
    operation: 'CREATE',
    type,
    subresource: 'token',
    namespace,
    name,
    object: { metadata: {}, ...body },
    oldObject: undefined,
    requester: { user: call.request.user, dryRun: false, warnings: [], auditAnnotations: {} },
  });
  await call.ctx.admission.admit(attrs);
  await call.ctx.admission.validate(attrs);
}

async function resolveBound(
  o: TokenRequestOptions,
  namespace: string,
  saName: string,
  refValue: unknown,
): Promise<Bound> {
  if (!isJsonObject(refValue)) return {};
  const ref: JsonObject = refValue;
  const kind = typeof ref['kind'] === 'string' ? ref['kind'] : '';
  const apiVersion = typeof ref['apiVersion'] === 'string' ? ref['apiVersion'] : '';
  const refName = typeof ref['name'] === 'string' ? ref['name'] : '';
  const refUid = typeof ref['uid'] === 'string' ? ref['uid'] : '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  let obj: KubeObject | undefined;
  const out: Bound = {};
  const found = (resource: string, o2: KubeObject | undefined): KubeObject => {
    if (o2 === undefined) throw notFound({ resource, group: '', name: refName });
    return o2;
  };
  if (group === '' && kind === 'Pod') {
    obj = found('pods', await o.objects.get('Pod', namespace, refName));
    const spec = isJsonObject(obj['spec']) ? obj['spec'] : {};
    if (spec['serviceAccountName'] !== saName) {
      throw badRequest(
        `cannot bind token for serviceaccount ${JSON.stringify(saName)} to pod running with different serviceaccount name.`,
      );
    }
    out.pod = { name: refName, uid: obj.metadata.uid ?? '' };
    const nodeName = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '';
    if (nodeName !== '') {
      const node = await o.objects.get('Node', undefined, nodeName);
      if (node !== undefined) out.node = { name: nodeName, uid: node.metadata.uid ?? '' };
    }
  } else if (group === '' && kind === 'Secret') {
    obj = found('secrets', await o.objects.get('Secret', namespace, refName));
    out.secret = { name: refName, uid: obj.metadata.uid ?? '' };
  } else if (group === '' && kind === 'Node') {
    obj = found('nodes', await o.objects.get('Node', undefined, refName));
    out.node = { name: refName, uid: obj.metadata.uid ?? '' };
  } else {
    throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
  }
  if (refUid !== '' && refUid !== obj.metadata.uid) {
    throw conflict(
      { resource: kind, group, name: refName },
      `the UID in the bound object reference (${refUid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return out;
}
