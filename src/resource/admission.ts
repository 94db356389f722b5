/**
 * The resource handler's side of admission: the attributes of one write, built from what the
 * handler has (type, target, objects, the request's options), and the two calls at kube's points.
 * The chain itself and its plugins are src/admission/.
 */
import type { AdmissionAttributes, AdmissionOperation } from '../admission/index.js';
import type { JsonObject, KubeObject } from '../api/object.js';
import { SERVER_USER, type UserInfo } from '../api/user.js';
import type { ResourceType } from '../registry/types.js';

/** Who asks and where the request's warnings and audit annotations go. */
export interface AdmissionRequester {
  readonly user: UserInfo;
  readonly dryRun: boolean;
  readonly warnings: string[];
  readonly auditAnnotations: Record<string, string>;
}

/** The parts of {@link AdmissionAttributes} the handler knows. */
export interface AdmissionInput {
  readonly operation: AdmissionOperation;
  readonly type: ResourceType;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly object: KubeObject | undefined;
  readonly oldObject: KubeObject | undefined;
  readonly requester: AdmissionRequester;
}

const OPTIONS_KIND: Readonly<Record<AdmissionOperation, string>> = {
  CREATE: 'CreateOptions',
  UPDATE: 'UpdateOptions',
  DELETE: 'DeleteOptions',
  CONNECT: '',
};

/** The attributes of one write (kube's `admission.NewAttributesRecord`). */
export function admissionAttributes(input: AdmissionInput): AdmissionAttributes {
  const { requester } = input;
  const options: JsonObject =
    input.operation === 'CONNECT'
      ? {}
      : {
          kind: OPTIONS_KIND[input.operation],
          apiVersion: 'meta.k8s.io/v1',
          ...(requester.dryRun ? { dryRun: ['All'] } : {}),
        };
  return {
    operation: input.operation,
    type: input.type,
    subresource: input.subresource,
    namespace: input.namespace ?? '',
    name: input.name,
    object: input.object,
    oldObject: input.oldObject,
    options,
    dryRun: requester.dryRun,
    user: requester.user,
    warn: (message) => {
      requester.warnings.push(message);
    },
    annotate: (key, value) => {
      requester.auditAnnotations[key] = value;
    },
  };
}

/** The requester of a write the server makes itself. */
export function serverRequester(dryRun = false): AdmissionRequester {
  return { user: SERVER_USER, dryRun, warnings: [], auditAnnotations: {} };
}
