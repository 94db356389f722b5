/**
 * The effective APF configuration: FlowSchema and PriorityLevelConfiguration objects read into
 * the shapes the dispatcher uses, with kube's v1 defaults applied to absent fields, and the
 * concurrency limit of each level computed from the server's.
 *
 * Defaults (v1): `matchingPrecedence` 1000; a Limited level's `nominalConcurrencyShares` 30, an
 * Exempt level's 0; `queuing` 64 queues, hand size 8, queue length limit 50.
 */
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';

/** One subject of a rule (kube's Subject, resolved). */
export type Subject =
  | { readonly kind: 'User'; readonly name: string }
  | { readonly kind: 'Group'; readonly name: string }
  | { readonly kind: 'ServiceAccount'; readonly namespace: string; readonly name: string };

/** A resource rule. */
export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly clusterScope: boolean;
  readonly namespaces: readonly string[];
}

/** A non-resource rule. */
export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** One `PolicyRulesWithSubjects`. */
export interface PolicyRules {
  readonly subjects: readonly Subject[];
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
}

/** A FlowSchema as the classifier uses it. */
export interface Schema {
  readonly name: string;
  readonly uid: string;
  readonly precedence: number;
  readonly priorityLevel: string;
  readonly distinguisher: 'ByUser' | 'ByNamespace' | undefined;
  readonly rules: readonly PolicyRules[];
}

/** How a Limited level answers a request beyond its seats. */
export type LimitResponse =
  | { readonly type: 'Reject' }
  | {
      readonly type: 'Queue';
      readonly queues: number;
      readonly handSize: number;
      readonly queueLengthLimit: number;
    };

/** A PriorityLevelConfiguration as the dispatcher uses it. */
export interface Level {
  readonly name: string;
  readonly uid: string;
  readonly exempt: boolean;
  readonly shares: number;
  readonly limitResponse: LimitResponse;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const positive = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback;

function subjectOf(raw: JsonObject): Subject | undefined {
  switch (raw['kind']) {
    case 'User':
      return { kind: 'User', name: str(obj(raw['user'])['name']) };
    case 'Group':
      return { kind: 'Group', name: str(obj(raw['group'])['name']) };
    case 'ServiceAccount': {
      const sa = obj(raw['serviceAccount']);
      return {
        kind: 'ServiceAccount',
        namespace: str(sa['namespace']),
        name: str(sa['name']),
      };
    }
    default:
      return undefined;
  }
}

function rulesOf(raw: JsonObject): PolicyRules {
  const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);
  return {
    subjects: list(raw['subjects'])
      .map(subjectOf)
      .filter((s): s is Subject => s !== undefined),
    resourceRules: list(raw['resourceRules']).map((r) => ({
      verbs: strings(r['verbs']),
      apiGroups: strings(r['apiGroups']),
      resources: strings(r['resources']),
      clusterScope: r['clusterScope'] === true,
      namespaces: strings(r['namespaces']),
    })),
    nonResourceRules: list(raw['nonResourceRules']).map((r) => ({
      verbs: strings(r['verbs']),
      nonResourceURLs: strings(r['nonResourceURLs']),
    })),
  };
}

/** A stored FlowSchema (or a bootstrap spec) as a {@link Schema}. */
export function schemaOf(name: string, uid: string, spec: JsonObject): Schema {
  const method = obj(spec['distinguisherMethod'])['type'];
  return {
    name,
    uid,
    precedence: positive(spec['matchingPrecedence'], 1000),
    priorityLevel: str(obj(spec['priorityLevelConfiguration'])['name']),
    distinguisher: method === 'ByUser' || method === 'ByNamespace' ? method : undefined,
    rules: (Array.isArray(spec['rules']) ? spec['rules'].filter(isJsonObject) : []).map(rulesOf),
  };
}

/** A stored PriorityLevelConfiguration (or a bootstrap spec) as a {@link Level}. */
export function levelOf(name: string, uid: string, spec: JsonObject): Level {
  if (spec['type'] === 'Exempt') {
    const exempt = obj(spec['exempt']);
    const shares = exempt['nominalConcurrencyShares'];
    return {
      name,
      uid,
      exempt: true,
      shares: typeof shares === 'number' && shares >= 0 ? shares : 0,
      limitResponse: { type: 'Reject' },
    };
  }
  const limited = obj(spec['limited']);
  const shares = limited['nominalConcurrencyShares'];
  const response = obj(limited['limitResponse']);
  const queuing = obj(response['queuing']);
  return {
    name,
    uid,
    exempt: false,
    shares: typeof shares === 'number' && shares >= 0 ? shares : 30,
    limitResponse:
      response['type'] === 'Queue'
        ? {
            type: 'Queue',
            queues: positive(queuing['queues'], 64),
            handSize: positive(queuing['handSize'], 8),
            queueLengthLimit: positive(queuing['queueLengthLimit'], 50),
          }
        : { type: 'Reject' },
  };
}

/** The spec of a stored object (an empty object when it has none). */
export function specOf(o: KubeObject): JsonObject {
  return obj(o['spec']);
}

/** Schemas in matching order: precedence, then name. */
export function matchingOrder(schemas: Iterable<Schema>): Schema[] {
  return [...schemas].sort((a, b) =>
    a.precedence !== b.precedence
      ? a.precedence - b.precedence
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0,
  );
}

/**
 * Each limited level's nominal concurrency limit, kube's formula:
 * `ceil(serverLimit * shares / sum of every level's shares)` (exempt levels' shares count too).
 */
export function nominalLimits(levels: Iterable<Level>, serverLimit: number): Map<string, number> {
  const all = [...levels];
  const total = all.reduce((sum, l) => sum + l.shares, 0);
  const out = new Map<string, number>();
  for (const l of all) {
    if (l.exempt) continue;
    out.set(l.name, total === 0 ? 0 : Math.ceil((serverLimit * l.shares) / total));
  }
  return out;
}
