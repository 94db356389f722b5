/**
 * Field selectors (`fieldSelector=`): comma separated `field=value`, `field==value`,
 * `field!=value` terms (`\,`, `\=` and `\\` escape), over the fields kube-apiserver selects on.
 * Every kind supports `metadata.name` and `metadata.namespace`; some kinds add their own (kube's
 * per-kind `GetAttrs` / field label conversion functions). Any other field is a 400 in the words
 * of the kind's conversion function in kube-apiserver v1.33: `field label not supported: <field>`
 * for the kinds with selectable fields of their own and custom resources, `field label "<field>"
 * not supported for Job`, and for every other kind (no conversion function of its own) `"<field>"
 * is not a known field selector: only "metadata.name", "metadata.namespace"`.
 */
import { badRequest } from '../api/errors.js';
import { goQuote } from '../apply/value.js';
import type { ResourceType } from '../registry/types.js';
import { isJsonObject, type KubeObject } from '../api/object.js';
import { conversionTo, type Conversion } from '../conversion/index.js';

/** One `field=value`, `field==value` or `field!=value` term. */
export interface FieldTerm {
  readonly field: string;
  readonly equal: boolean;
  readonly value: string;
}

/** Reads one selectable field of an object as a string (`''` when absent, as kube). */
type FieldReader = (obj: KubeObject) => string;

function path(...segments: string[]): FieldReader {
  return (obj) => {
    let cur: unknown = obj;
    for (const s of segments) cur = isJsonObject(cur) ? cur[s] : undefined;
    if (typeof cur === 'string') return cur;
    if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
    return '';
  };
}

/** A field that kube renders from a bool or number with a default when absent. */
function withDefault(reader: FieldReader, fallback: string): FieldReader {
  return (obj) => {
    const v = reader(obj);
    return v === '' ? fallback : v;
  };
}

const COMMON: Readonly<Record<string, FieldReader>> = {
  'metadata.name': path('metadata', 'name'),
  'metadata.namespace': path('metadata', 'namespace'),
};

const involved = (f: string): FieldReader => path('involvedObject', f);
const regarding = (f: string): FieldReader => path('regarding', f);

/** `Kind` for the core group, `Kind.group` otherwise: the key of {@link KIND_FIELDS}. */
function ruleKey(type: Pick<ResourceType, 'group' | 'kind'>): string {
  return type.group === '' ? type.kind : `${type.kind}.${type.group}`;
}

/** Extra selectable fields per kind (key as {@link ruleKey}). */
const KIND_FIELDS: Readonly<Record<string, Readonly<Record<string, FieldReader>>>> = {
  Pod: {
    'spec.nodeName': path('spec', 'nodeName'),
    'spec.restartPolicy': path('spec', 'restartPolicy'),
    'spec.schedulerName': path('spec', 'schedulerName'),
    'spec.serviceAccountName': path('spec', 'serviceAccountName'),
    'spec.hostNetwork': withDefault(path('spec', 'hostNetwork'), 'false'),
    'status.phase': path('status', 'phase'),
    'status.podIP': path('status', 'podIP'),
    'status.nominatedNodeName': path('status', 'nominatedNodeName'),
  },
  Event: {
    'involvedObject.kind': involved('kind'),
    'involvedObject.namespace': involved('namespace'),
    'involvedObject.name': involved('name'),
    'involvedObject.uid': involved('uid'),
    'involvedObject.apiVersion': involved('apiVersion'),
    'involvedObject.resourceVersion': involved('resourceVersion'),
    'involvedObject.fieldPath': involved('fieldPath'),
    reason: path('reason'),
    reportingComponent: path('reportingComponent'),
    // kube's selectable `source`: the source component, else the reporting controller.
    source: (obj) => {
      const component = path('source', 'component')(obj);
      return component === '' ? path('reportingComponent')(obj) : component;
    },
    type: path('type'),
  },
  'Event.events.k8s.io': {
    'regarding.kind': regarding('kind'),
    'regarding.namespace': regarding('namespace'),
    'regarding.name': regarding('name'),
    'regarding.uid': regarding('uid'),
    'regarding.apiVersion': regarding('apiVersion'),
    'regarding.resourceVersion': regarding('resourceVersion'),
    'regarding.fieldPath': regarding('fieldPath'),
    reason: path('reason'),
    reportingController: path('reportingController'),
    type: path('type'),
  },
  Namespace: { 'status.phase': path('status', 'phase') },
  Node: { 'spec.unschedulable': withDefault(path('spec', 'unschedulable'), 'false') },
  Secret: { type: path('type') },
  // kube-proxy lists Services with `spec.clusterIP!=None`
  Service: { 'spec.clusterIP': path('spec', 'clusterIP'), 'spec.type': path('spec', 'type') },
  ReplicationController: { 'status.replicas': withDefault(path('status', 'replicas'), '0') },
  'Job.batch': { 'status.successful': withDefault(path('status', 'successful'), '0') },
  'CertificateSigningRequest.certificates.k8s.io': { 'spec.signerName': path('spec', 'signerName') },
};

/**
 * kube's refusal of `field` for the kind of `type`; `own`: the kind has selectable fields of its
 * own, or is a custom resource (see the module comment).
 */
function unsupported(field: string, type: Pick<ResourceType, 'group' | 'kind'>, own: boolean): string {
  if (ruleKey(type) === 'Job.batch') return `field label ${goQuote(field)} not supported for Job`;
  if (own) return `field label not supported: ${field}`;
  return `${goQuote(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

/** A parsed field selector, bound to the fields of one kind. */
export class FieldSelector {
  readonly #terms: readonly (FieldTerm & { read: FieldReader })[];
  /** Brings objects stored by another version of the kind to this kind's form first. */
  readonly #convert: Conversion;

  private constructor(terms: readonly (FieldTerm & { read: FieldReader })[], convert: Conversion = (o) => o) {
    this.#terms = terms;
    this.#convert = convert;
  }

  get empty(): boolean {
    return this.#terms.length === 0;
  }

  /** Whether `obj` is selected. */
  matches(obj: KubeObject): boolean {
    if (this.#terms.length === 0) return true;
    const own = this.#convert(obj);
    return this.#terms.every((t) => (t.read(own) === t.value) === t.equal);
  }

  /** The name this selector pins (`metadata.name=x`), if any: a watch or list of one object. */
  get singleName(): string | undefined {
    return this.#terms.find((t) => t.field === 'metadata.name' && t.equal)?.value;
  }

  /**
   * Parses `text` for the kind of `type` ({@link parseFieldTerms}, then {@link bind}).
   * @throws ApiError 400 for bad syntax or a field the kind does not select on.
   */
  static parse(
    text: string | undefined,
    type: Pick<ResourceType, 'group' | 'kind'>,
    selectable?: readonly string[],
  ): FieldSelector {
    return FieldSelector.bind(parseFieldTerms(text), type, selectable);
  }

  /**
   * Binds parsed `terms` to the fields of the kind of `type`; `selectable` are a custom
   * resource's own selectable fields (its `selectableFields`, as `spec.color`; undefined for a
   * built-in kind, which selects on kube's built-in ones).
   * @throws ApiError 400 for a field the kind does not select on.
   */
  static bind(
    terms: readonly FieldTerm[],
    type: Pick<ResourceType, 'group' | 'kind'>,
    selectable?: readonly string[],
  ): FieldSelector {
    if (terms.length === 0) return new FieldSelector([]);
    const fields: Readonly<Record<string, FieldReader>> | undefined =
      selectable === undefined
        ? KIND_FIELDS[ruleKey(type)]
        : Object.fromEntries(selectable.map((f) => [f, path(...f.split('.'))]));
    // Custom resources answer as kinds with fields of their own, selectable fields or not.
    const own = fields !== undefined;
    return new FieldSelector(
      terms.map((term) => {
        const read = COMMON[term.field] ?? fields?.[term.field];
        if (read === undefined) throw badRequest(unsupported(term.field, type, own));
        return { ...term, read };
      }),
      conversionTo(type),
    );
  }
}

/**
 * The terms of a field selector, checked for syntax only: kube parses them with the other list
 * options and checks their fields against the kind later ({@link FieldSelector.bind}).
 * @throws ApiError 400 for bad syntax.
 */
export function parseFieldTerms(text: string | undefined): readonly FieldTerm[] {
  if (text === undefined || text === '') return [];
  return splitTerms(text).map((term) => parseTerm(term, text));
}

/** Splits on unescaped commas. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      cur += c + (text[i + 1] ?? '');
      i++;
    } else if (c === ',') {
      terms.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  terms.push(cur);
  return terms;
}

function unescape(value: string, whole: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\') {
      const n = value[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') {
        throw badRequest(`invalid field selector: ${JSON.stringify(whole)}: invalid escape sequence`);
      }
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      throw badRequest(`invalid field selector: ${JSON.stringify(whole)}: unescaped ${c}`);
    } else {
      out += c;
    }
  }
  return out;
}

function parseTerm(term: string, whole: string): FieldTerm {
  for (const op of ['!=', '==', '='] as const) {
    const at = term.indexOf(op);
    if (at >= 0) {
      return {
        field: term.slice(0, at).trim(),
        equal: op !== '!=',
        value: unescape(term.slice(at + op.length), whole),
      };
    }
  }
  throw badRequest(`invalid selector: '${whole}'; can't understand '${term}'`);
}
