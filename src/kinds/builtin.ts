/**
 * The strategy of a built-in kind: its flags from proto/kinds.yaml (through its
 * {@link ResourceType}) and kube-apiserver's per-kind code in src/defaults, src/validation and
 * src/table, resolved once per kind.
 */
import type { FieldSet, Path } from '../apply/index.js';
import type { KubeObject } from '../api/object.js';
import { defaultObject } from '../defaults/index.js';
import { dropDisabledStatusFields } from '../defaults/disabled-fields.js';
import { prepareForCreate, prepareForUpdate, type PrepareOptions } from '../defaults/prepare.js';
import type { NameRule, ResourceType } from '../registry/types.js';
import { printerFor, type TablePrinter } from '../table/index.js';
import { validateObject, type FieldError } from '../validation/index.js';
import { objectWriteWarnings } from '../validation/core/object-warnings.js';
import { podWriteWarnings } from '../validation/core/pod-warnings.js';
import { prepareCrdForDelete } from './crd-deletion.js';
import { namespaceCanDeleteOnUpdate, podGracePeriodSeconds } from './deletion.js';
import { DEPLOYMENT_STATUS_EXTRAS, POD_STATUS_EXTRAS, ResetFields } from './reset-fields.js';
import type { KindStrategy } from './strategy.js';

/** The parts of a built-in kind's behaviour that are code, not data. */
interface KindCode {
  readonly statusExtras?: readonly Path[];
  /** See {@link KindStrategy.statusKeepsMetadata}. */
  readonly statusKeepsMetadata?: readonly string[];
  readonly gracePeriodSeconds?: (obj: KubeObject, requested: number | undefined) => number;
  readonly canDeleteOnUpdate?: (obj: KubeObject) => boolean;
  readonly prepareForDelete?: (obj: KubeObject, now: Date) => void;
}

/** By `group/Kind`; kinds not listed have none. */
/** Status strategies that keep the whole stored metadata (managedFields aside). */
const STATUS_RESETS_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

const CODE: ReadonlyMap<string, KindCode> = new Map<string, KindCode>([
  [
    '/Pod',
    {
      statusExtras: POD_STATUS_EXTRAS,
      gracePeriodSeconds: podGracePeriodSeconds,
      // kube's pod status strategy keeps the owner references (old kubelets corrupted them).
      statusKeepsMetadata: ['ownerReferences'],
    },
  ],
  ['/Namespace', { canDeleteOnUpdate: namespaceCanDeleteOnUpdate }],
  // kube's deployment status strategy keeps the stored labels.
  ['apps/Deployment', { statusExtras: DEPLOYMENT_STATUS_EXTRAS, statusKeepsMetadata: ['labels'] }],
  ['storage.k8s.io/VolumeAttachment', { statusKeepsMetadata: STATUS_RESETS_METADATA }],
  [
    'apiextensions.k8s.io/CustomResourceDefinition',
    {
      statusKeepsMetadata: ['labels', 'annotations', 'ownerReferences'],
      prepareForDelete: prepareCrdForDelete,
    },
  ],
  ['apiregistration.k8s.io/APIService', { statusKeepsMetadata: STATUS_RESETS_METADATA }],
  ['networking.k8s.io/ServiceCIDR', { statusKeepsMetadata: STATUS_RESETS_METADATA }],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', { statusKeepsMetadata: STATUS_RESETS_METADATA }],
  [
    'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
    { statusKeepsMetadata: STATUS_RESETS_METADATA },
  ],
]);

const noGrace = (): number => 0;
const always = (): boolean => true;

/** A built-in kind's {@link KindStrategy}. */
export class BuiltInStrategy implements KindStrategy {
  readonly tracksGeneration: boolean;
  readonly createOnUpdate: boolean;
  readonly keepStatusOnCreate: boolean;
  readonly returnDeletedObject: boolean;
  readonly nameRule: NameRule;
  readonly eventTTL: boolean;
  readonly table: TablePrinter;
  readonly gracePeriodSeconds: (obj: KubeObject, requested: number | undefined) => number;
  readonly gracefulDelete: boolean;
  readonly canDeleteOnUpdate: (obj: KubeObject) => boolean;
  readonly statusKeepsMetadata: readonly string[];
  readonly prepareForDelete: ((obj: KubeObject, now: Date) => void) | undefined;
  readonly #group: string;
  readonly #kind: string;
  readonly #reset: ResetFields;

  constructor(type: ResourceType) {
    this.tracksGeneration = type.tracksGeneration;
    this.createOnUpdate = type.createOnUpdate;
    this.keepStatusOnCreate = type.keepStatusOnCreate;
    this.returnDeletedObject = type.returnDeletedObject;
    this.nameRule = type.nameRule;
    this.eventTTL = type.eventTTL;
    this.table = printerFor(type.group, type.plural);
    this.#group = type.group;
    this.#kind = type.kind;
    const code = CODE.get(`${type.group}/${type.kind}`);
    this.gracePeriodSeconds = code?.gracePeriodSeconds ?? noGrace;
    this.gracefulDelete = code?.gracePeriodSeconds !== undefined;
    this.canDeleteOnUpdate = code?.canDeleteOnUpdate ?? always;
    this.statusKeepsMetadata = code?.statusKeepsMetadata ?? [];
    this.prepareForDelete = code?.prepareForDelete;
    this.#reset = new ResetFields(type.subresources.includes('status'), code?.statusExtras);
  }

  default(obj: KubeObject): void {
    defaultObject(this.#group, this.#kind, obj);
  }

  prepareForCreate(obj: KubeObject, options?: PrepareOptions): FieldError[] {
    return prepareForCreate(this.#group, this.#kind, obj, options);
  }

  prepareForUpdate(obj: KubeObject, old: KubeObject, options?: PrepareOptions): FieldError[] {
    return prepareForUpdate(this.#group, this.#kind, obj, old, options);
  }

  prepareForStatusUpdate(obj: KubeObject, old: KubeObject): void {
    dropDisabledStatusFields(this.#group, this.#kind, obj, old);
  }

  validate(obj: KubeObject, old: KubeObject | undefined, subresource?: string): FieldError[] {
    return validateObject(this.#group, this.#kind, obj, old, subresource);
  }

  warnings(obj: KubeObject, old: KubeObject | undefined): string[] {
    return [
      ...podWriteWarnings(this.#group, this.#kind, obj, old),
      ...objectWriteWarnings(this.#group, this.#kind, obj, old),
    ];
  }

  resetFields(subresource: string | undefined): FieldSet | undefined {
    return this.#reset.of(subresource);
  }
}
