/**
 * ControllerRevisions as kube's `pkg/controller/history` makes them for StatefulSets and
 * DaemonSets: the revision's data is the owner's pod template as a patch
 * (`{"spec":{"template":{...,"$patch":"replace"}}}`), its name `<owner>-<hash>` where the hash is
 * FNV-32a of the data (and the collision count) in kube's safe alphabet, its `revision` one more
 * than the highest. An equal revision is reused (and renumbered when it is not the newest); a
 * name taken by different data bumps the owner's `collisionCount`.
 */
import { goEscapedJson } from '../../api/go-json.js';
import type { ControllerRevision } from '../../api/types/apps-v1.js';
import type { PodTemplateSpec } from '../../api/types/core-v1.js';
import type { ObjectMeta, OwnerReference } from '../../api/types/meta-v1.js';

/** The label with a revision's hash (kube's `controller.kubernetes.io/hash`). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
/** The pod label naming the revision a pod was made from. */
export const POD_REVISION_LABEL = 'controller-revision-hash';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-32a of a UTF-8 string. */
function fnv32a(text: string, hash = 0x811c9dc5): number {
  let h = hash;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** kube's `rand.SafeEncodeString`: each character mapped into an alphabet without vowels. */
function safeEncode(s: string): string {
  let out = '';
  for (const ch of s) out += SAFE_ALPHABET[ch.charCodeAt(0) % SAFE_ALPHABET.length] ?? '';
  return out;
}

/** Go's `json.Marshal` of a string. */
const goString = (s: string): string => goEscapedJson(JSON.stringify(s));

/**
 * Canonical JSON, as Go's `json.Marshal` writes a map (sorted keys, HTML-safe strings), so equal
 * templates give equal bytes, and a revision's bytes are the ones kube's `getPatch` gives.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'string') return goString(value);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${goString(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The revision data of a pod template: kube's `getPatch` shape, which marshals the typed
 * template, so its metadata carries a zero `creationTimestamp` as `null` (clients such as
 * kubectl's rollback and kube's e2e compare these bytes with the ones they make).
 */
export function templatePatch(template: PodTemplateSpec | undefined): unknown {
  const copy = structuredClone(template) ?? { metadata: {} };
  const metadata = { creationTimestamp: null, ...(copy.metadata ?? {}) };
  return sortedKeys({ spec: { template: { ...copy, metadata, $patch: 'replace' } } });
}

/**
 * `value` with every object's keys in sorted order, as Go writes a map: the server keeps a
 * RawExtension as it is sent, so the bytes clients read back are these (but for keys that look
 * like array indexes, which a JavaScript object always lists first).
 */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortedKeys((value as Record<string, unknown>)[k]);
  return out;
}

/**
 * `data` as compared for equality: without a null `creationTimestamp` in the template's metadata,
 * which revisions written before {@link templatePatch} gave it lack (so they stay equal, and no
 * pod is replaced for it).
 */
function comparable(data: unknown): string {
  const template = (data as { spec?: { template?: { metadata?: Record<string, unknown> } } } | undefined)
    ?.spec?.template;
  const metadata = template?.metadata;
  if (metadata === undefined || metadata === null || metadata['creationTimestamp'] !== null)
    return canonicalJson(data);
  const { creationTimestamp: _zero, ...rest } = metadata;
  return canonicalJson({
    ...(data as object),
    spec: { ...(data as { spec: object }).spec, template: { ...template, metadata: rest } },
  });
}

/**
 * The pod template a revision holds (what {@link templatePatch} stored), or undefined when its
 * data is not such a patch: what kube's `ApplyRevision` puts into the owner's spec.
 */
export function revisionTemplate(rev: ControllerRevision): PodTemplateSpec | undefined {
  const data = rev.data as { spec?: { template?: Record<string, unknown> } } | undefined;
  const template = data?.spec?.template;
  if (template === undefined || template === null || typeof template !== 'object') return undefined;
  const { $patch: _patch, ...rest } = template;
  return structuredClone(rest) as unknown as PodTemplateSpec;
}

/** kube's `HashControllerRevision`. */
export function hashRevision(data: unknown, collisionCount: number | undefined): string {
  let h = fnv32a(canonicalJson(data));
  if (collisionCount !== undefined) h = fnv32a(String(collisionCount), h);
  return safeEncode(String(h));
}

/** `<owner>-<hash>`, the owner's name cut to leave room (kube: 223 characters). */
export function revisionName(ownerName: string, hash: string): string {
  return `${ownerName.length > 223 ? ownerName.slice(0, 223) : ownerName}-${hash}`;
}

/** A new revision object (not yet stored). */
export function newRevision(
  owner: { metadata: ObjectMeta },
  ref: OwnerReference,
  template: PodTemplateSpec | undefined,
  revision: number,
  collisionCount: number | undefined,
): ControllerRevision {
  const data = templatePatch(template);
  const hash = hashRevision(data, collisionCount);
  const annotations = owner.metadata.annotations;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(owner.metadata.name ?? '', hash),
      namespace: owner.metadata.namespace ?? '',
      labels: { ...(template?.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(annotations === undefined ? {} : { annotations: { ...annotations } }),
      ownerReferences: [ref],
    },
    data,
    revision,
  };
}

/** The hash of a stored revision (its label, else the suffix of its name). */
export function revisionHash(rev: ControllerRevision): string {
  const label = rev.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (label !== undefined) return label;
  const name = rev.metadata.name ?? '';
  return name.slice(name.lastIndexOf('-') + 1);
}

/** Revisions with the same data, oldest revision number first. */
export function equalRevisions(
  revisions: readonly ControllerRevision[],
  wanted: ControllerRevision,
): ControllerRevision[] {
  const want = comparable(wanted.data);
  return revisions.filter((r) => comparable(r.data) === want).sort(byRevision);
}

/** Ascending by revision number, then name. */
export function byRevision(a: ControllerRevision, b: ControllerRevision): number {
  const d = (a.revision ?? 0) - (b.revision ?? 0);
  return d !== 0 ? d : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** The next revision number: one more than the highest. */
export function nextRevisionNumber(revisions: readonly ControllerRevision[]): number {
  return revisions.reduce((m, r) => Math.max(m, r.revision ?? 0), 0) + 1;
}

/** Stores revisions; the controller implements it over the client. */
export interface RevisionStore {
  create(rev: ControllerRevision): Promise<ControllerRevision>;
  /** Reads a revision by name; undefined when absent. */
  get(namespace: string, name: string): Promise<ControllerRevision | undefined>;
  /** Sets a stored revision's number. */
  renumber(rev: ControllerRevision, revision: number): Promise<ControllerRevision>;
}

/** Builds the revision for a revision number and collision count. */
export type RevisionBuilder = (revision: number, collisionCount: number) => ControllerRevision;

/**
 * kube's `getStatefulSetRevisions` / DaemonSet `constructHistory` core: the update revision,
 * reusing an equal one (renumbered to be the newest), creating a new one otherwise (bumping
 * `collisionCount` while the name is taken by other data).
 */
export async function ensureUpdateRevision(
  ownerName: string,
  build: RevisionBuilder,
  revisions: readonly ControllerRevision[],
  collisionCount: number,
  store: RevisionStore,
): Promise<{ update: ControllerRevision; collisionCount: number }> {
  const sorted = [...revisions].sort(byRevision);
  const next = nextRevisionNumber(sorted);
  const equal = equalRevisions(sorted, build(next, collisionCount));
  const latestEqual = equal[equal.length - 1];
  const newest = sorted[sorted.length - 1];
  if (latestEqual !== undefined) {
    if (newest !== undefined && latestEqual.metadata.name === newest.metadata.name)
      return { update: latestEqual, collisionCount };
    return { update: await store.renumber(latestEqual, next), collisionCount };
  }
  let count = collisionCount;
  for (let attempt = 0; attempt < 10; attempt++) {
    const candidate = build(next, count);
    try {
      return { update: await store.create(candidate), collisionCount: count };
    } catch (err) {
      const existing = await store.get(candidate.metadata.namespace ?? '', candidate.metadata.name ?? '');
      if (existing === undefined) throw err;
      if (comparable(existing.data) === comparable(candidate.data))
        return { update: existing, collisionCount: count };
      count++;
    }
  }
  throw new Error(`${ownerName}: no free revision name after 10 collisions`);
}
