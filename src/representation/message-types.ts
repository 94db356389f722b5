/**
 * Which protobuf message encodes an object of a given `apiVersion`/`kind`: the served kinds from
 * the registry, plus the kinds that appear in responses without being served resources (Status,
 * Scale, TokenRequest, the metadata-only kinds, DeleteOptions in request bodies).
 */
import type { Registry } from '../registry/types.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Response kinds that are not served resources, by `apiVersion/kind`. */
const EXTRA: ReadonlyMap<string, string> = new Map([
  ['v1/Status', `${META}.Status`],
  ['meta.k8s.io/v1/Status', `${META}.Status`],
  ['autoscaling/v1/Scale', 'k8s.io.api.autoscaling.v1.Scale'],
  // The answer of serviceaccounts/token.
  ['authentication.k8s.io/v1/TokenRequest', 'k8s.io.api.authentication.v1.TokenRequest'],
  ['meta.k8s.io/v1/PartialObjectMetadata', `${META}.PartialObjectMetadata`],
  ['meta.k8s.io/v1beta1/PartialObjectMetadata', `${META}.PartialObjectMetadata`],
  ['meta.k8s.io/v1/PartialObjectMetadataList', `${META}.PartialObjectMetadataList`],
  ['meta.k8s.io/v1beta1/PartialObjectMetadataList', `${META}.PartialObjectMetadataList`],
  ['v1/DeleteOptions', `${META}.DeleteOptions`],
  ['meta.k8s.io/v1/DeleteOptions', `${META}.DeleteOptions`],
]);

/** The message type of the meta.v1 Status. */
export const STATUS_MESSAGE = `${META}.Status`;
/** The message type of meta.v1 DeleteOptions. */
export const DELETE_OPTIONS_MESSAGE = `${META}.DeleteOptions`;

/** Lookup of message types by `apiVersion` and `kind` (kinds and their lists). */
export class MessageTypes {
  readonly #registry: Registry;

  constructor(registry: Registry) {
    this.#registry = registry;
  }

  /** The fully qualified message name, or undefined when the kind has no protobuf form here. */
  of(apiVersion: string, kind: string): string | undefined {
    const extra = EXTRA.get(`${apiVersion}/${kind}`);
    if (extra !== undefined) return extra;
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const type = this.#registry.byKind(group, version, kind);
    if (type !== undefined) return type.messageType === '' ? undefined : type.messageType;
    // `<Kind>List` (a deletecollection's answer) is the kind's message name plus `List`.
    if (kind.endsWith('List')) {
      const item = this.#registry.byKind(group, version, kind.slice(0, -'List'.length));
      if (item !== undefined && item.messageType !== '') return `${item.messageType}List`;
    }
    return undefined;
  }
}
