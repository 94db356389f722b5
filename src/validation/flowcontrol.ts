/**
 * flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration and FlowSchema: kube v1.33's
 * `ValidatePriorityLevelConfiguration` and `ValidateFlowSchema`, with kube's paths and messages:
 * the level types and their limits, queuing that can deal hands, subjects and rules a schema
 * can match on, and the mandatory objects (`exempt`, `catch-all`), whose specs must stay
 * kube's fixed ones (the `exempt` level may change its `spec.exempt` only).
 *
 * Runs on defaulted objects: queuing's zero values have become kube's defaults by then. A spec
 * refused for not being the fixed one is shown in Go's `%#v` of kube's internal type, as kube
 * shows it, except that a set pointer field shows what it points to instead of an address.
 */
import { bootstrapObject, isMandatory } from '../api/flowcontrol-bootstrap.js';
import {
  duplicate,
  forbidden,
  goStringSlice,
  GoValue,
  invalid,
  notSupported,
  required,
  type FieldError,
} from './field-error.js';
import { isDNS1123Label, isDNS1123Subdomain } from './formats.js';
import { has, isObject, num, obj, objects, str, strings, type JsonObject } from './json.js';
import { child, index } from './path.js';

const LEVEL_TYPES = ['Exempt', 'Limited'];
const LIMIT_RESPONSES = ['Queue', 'Reject'];
const DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10_000_000;
/** Shuffle sharding's hash bits (kube's `shufflesharding.MaxHashBits`). */
const MAX_HASH_BITS = 60;
/** The annotation of flowcontrol v1beta3 that a stored level may not carry. */
const PRESERVE_ZERO_SHARES = 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares';
const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

/** A PriorityLevelConfiguration. */
export function validatePriorityLevelConfiguration(
  plc: JsonObject,
  _old: JsonObject | undefined,
  errs: FieldError[],
): void {
  const meta = obj(plc, 'metadata');
  if (has(obj(meta, 'annotations'), PRESERVE_ZERO_SHARES)) {
    errs.push(forbidden('metadata.annotations', `annotation '${PRESERVE_ZERO_SHARES}' is forbidden`));
  }
  const name = str(meta, 'name');
  const spec = obj(plc, 'spec') ?? {};
  validateLevelSpec(spec, name, errs);
  validateMandatoryLevel(spec, name, errs);
  validateConditions(obj(plc, 'status'), errs);
}

function validateLevelSpec(spec: JsonObject, name: string, errs: FieldError[]): void {
  const type = str(spec, 'type');
  if ((name === 'exempt') !== (type === 'Exempt')) {
    errs.push(invalid('spec.type', type, "type must be 'Exempt' if and only if name is 'exempt'"));
  }
  const limited = obj(spec, 'limited');
  const exempt = obj(spec, 'exempt');
  if (type === 'Exempt') {
    if (limited !== undefined) errs.push(forbidden('spec.limited', 'must be nil if the type is not Limited'));
    if (exempt !== undefined) validateExempt(exempt, errs);
  } else if (type === 'Limited') {
    if (exempt !== undefined) errs.push(forbidden('spec.exempt', 'must be nil if the type is Limited'));
    if (limited === undefined) errs.push(required('spec.limited', 'must not be empty when type is Limited'));
    else validateLimited(limited, errs);
  } else {
    errs.push(notSupported('spec.type', type, LEVEL_TYPES));
  }
}

function validateLimited(limited: JsonObject, errs: FieldError[]): void {
  const shares = num(limited, 'nominalConcurrencyShares') ?? 0;
  if (shares < 0) {
    errs.push(invalid('spec.limited.nominalConcurrencyShares', shares, 'must be a non-negative integer'));
  }
  validateLimitResponse(obj(limited, 'limitResponse') ?? {}, errs);
  checkPercent(limited, 'spec.limited', errs);
  const borrowing = num(limited, 'borrowingLimitPercent');
  if (borrowing !== undefined && borrowing < 0) {
    errs.push(
      invalid(
        'spec.limited.borrowingLimitPercent',
        borrowing,
        'if specified, must be a non-negative integer',
      ),
    );
  }
}

function validateExempt(exempt: JsonObject, errs: FieldError[]): void {
  const shares = num(exempt, 'nominalConcurrencyShares');
  if (shares !== undefined && shares < 0) {
    errs.push(invalid('spec.exempt.nominalConcurrencyShares', shares, 'must be a non-negative integer'));
  }
  checkPercent(exempt, 'spec.exempt', errs);
}

function checkPercent(limits: JsonObject, path: string, errs: FieldError[]): void {
  const lendable = num(limits, 'lendablePercent');
  if (lendable !== undefined && (lendable < 0 || lendable > 100)) {
    errs.push(invalid(`${path}.lendablePercent`, lendable, 'must be between 0 and 100, inclusive'));
  }
}

function validateLimitResponse(response: JsonObject, errs: FieldError[]): void {
  const path = 'spec.limited.limitResponse';
  const type = str(response, 'type');
  const queuing = obj(response, 'queuing');
  if (type === 'Reject') {
    if (queuing !== undefined) {
      errs.push(forbidden(`${path}.queuing`, 'must be nil if limited.limitResponse.type is not Limited'));
    }
  } else if (type === 'Queue') {
    if (queuing === undefined) {
      errs.push(required(`${path}.queuing`, 'must not be empty if limited.limitResponse.type is Limited'));
    } else {
      validateQueuing(queuing, `${path}.queuing`, errs);
    }
  } else {
    errs.push(notSupported(`${path}.type`, type, LIMIT_RESPONSES));
  }
}

function validateQueuing(queuing: JsonObject, path: string, errs: FieldError[]): void {
  const lengthLimit = num(queuing, 'queueLengthLimit') ?? 0;
  if (lengthLimit <= 0) errs.push(invalid(`${path}.queueLengthLimit`, lengthLimit, 'must be positive'));
  const queues = num(queuing, 'queues') ?? 0;
  if (queues <= 0) errs.push(invalid(`${path}.queues`, queues, 'must be positive'));
  else if (queues > MAX_QUEUES) {
    errs.push(invalid(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  }
  const handSize = num(queuing, 'handSize') ?? 0;
  if (handSize <= 0) errs.push(invalid(`${path}.handSize`, handSize, 'must be positive'));
  else if (handSize > queues) {
    errs.push(invalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`));
  } else if (Math.ceil(Math.log2(queues) * handSize) > MAX_HASH_BITS) {
    errs.push(
      invalid(
        `${path}.handSize`,
        handSize,
        `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  }
}

function validateMandatoryLevel(spec: JsonObject, name: string, errs: FieldError[]): void {
  if (!isMandatory('PriorityLevelConfiguration', name)) return;
  const fixed = bootstrapObject('PriorityLevelConfiguration', name)?.spec ?? {};
  if (name === 'exempt') {
    // Only the `exempt` field of the exempt level may be changed.
    const { exempt: _mine, ...rest } = spec;
    const { exempt: _fixed, ...fixedRest } = fixed;
    if (!goEqual(rest, fixedRest)) {
      errs.push(
        invalid(
          'spec',
          levelSpecValue(spec),
          "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
        ),
      );
    }
    return;
  }
  if (!goEqual(spec, fixed)) {
    errs.push(invalid('spec', levelSpecValue(spec), `spec of '${name}' must equal the fixed value`));
  }
}

/** A FlowSchema. */
export function validateFlowSchema(fs: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const name = str(obj(fs, 'metadata'), 'name');
  const spec = obj(fs, 'spec') ?? {};
  validateSchemaSpec(spec, name, errs);
  if (isMandatory('FlowSchema', name)) {
    const fixed = bootstrapObject('FlowSchema', name)?.spec ?? {};
    if (!goEqual(spec, fixed)) {
      errs.push(invalid('spec', schemaSpecValue(spec), `spec of '${name}' must equal the fixed value`));
    }
  }
  validateConditions(obj(fs, 'status'), errs);
}

function validateSchemaSpec(spec: JsonObject, name: string, errs: FieldError[]): void {
  const precedence = num(spec, 'matchingPrecedence') ?? 0;
  if (precedence <= 0) errs.push(invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
  if (precedence > MAX_MATCHING_PRECEDENCE) {
    errs.push(
      invalid('spec.matchingPrecedence', precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`),
    );
  }
  if (precedence === 1 && name !== 'exempt') {
    errs.push(
      invalid(
        'spec.matchingPrecedence',
        precedence,
        "only the schema named 'exempt' may have matchingPrecedence 1",
      ),
    );
  }
  const distinguisher = obj(spec, 'distinguisherMethod');
  if (distinguisher !== undefined && !DISTINGUISHER_METHODS.includes(str(distinguisher, 'type'))) {
    errs.push(
      notSupported(
        'spec.distinguisherMethod.type',
        new GoValue(
          `flowcontrol.FlowDistinguisherMethod{Type:${JSON.stringify(str(distinguisher, 'type'))}}`,
        ),
        DISTINGUISHER_METHODS,
      ),
    );
  }
  const level = str(obj(spec, 'priorityLevelConfiguration'), 'name');
  if (level === '') {
    errs.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  } else {
    for (const msg of isDNS1123Subdomain(level)) {
      errs.push(invalid('spec.priorityLevelConfiguration.name', level, msg));
    }
  }
  objects(spec, 'rules').forEach((rule, i) => validateRule(rule, index('spec.rules', i), errs));
}

function validateRule(rule: JsonObject, path: string, errs: FieldError[]): void {
  const subjects = objects(rule, 'subjects');
  if (subjects.length === 0) {
    errs.push(required(child(path, 'subjects'), 'subjects must contain at least one value'));
  }
  subjects.forEach((s, i) => validateSubject(s, index(child(path, 'subjects'), i), errs));
  const resourceRules = objects(rule, 'resourceRules');
  const nonResourceRules = objects(rule, 'nonResourceRules');
  if (resourceRules.length === 0 && nonResourceRules.length === 0) {
    errs.push(required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  }
  resourceRules.forEach((r, i) => validateResourceRule(r, index(child(path, 'resourceRules'), i), errs));
  nonResourceRules.forEach((r, i) =>
    validateNonResourceRule(r, index(child(path, 'nonResourceRules'), i), errs),
  );
}

/** The subject member each kind names, with kube's words for a member of another kind. */
const SUBJECT_MEMBERS: readonly (readonly [kind: string, member: string, misplaced: string])[] = [
  [
    'ServiceAccount',
    'serviceAccount',
    "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
  ],
  ['User', 'user', "user is forbidden when subject kind is not 'User'"],
  ['Group', 'group', "group is forbidden when subject kind is not 'Group'"],
];

function validateSubject(subject: JsonObject, path: string, errs: FieldError[]): void {
  const kind = str(subject, 'kind');
  const own = SUBJECT_MEMBERS.find(([k]) => k === kind);
  if (own === undefined) {
    errs.push(notSupported(child(path, 'kind'), kind, SUBJECT_KINDS));
    return;
  }
  const [, member] = own;
  const value = obj(subject, member);
  const memberPath = child(path, member);
  if (value === undefined) {
    errs.push(required(memberPath, `${member} is required when subject kind is '${kind}'`));
  } else if (kind === 'ServiceAccount') {
    validateServiceAccountSubject(value, memberPath, errs);
  } else if (str(value, 'name') === '') {
    errs.push(required(child(memberPath, 'name')));
  }
  for (const [otherKind, other, misplaced] of SUBJECT_MEMBERS) {
    if (otherKind !== kind && obj(subject, other) !== undefined)
      errs.push(forbidden(child(path, other), misplaced));
  }
}

function validateServiceAccountSubject(account: JsonObject, path: string, errs: FieldError[]): void {
  const name = str(account, 'name');
  if (name === '') errs.push(required(child(path, 'name')));
  else if (name !== '*') {
    for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(child(path, 'name'), name, msg));
  }
  const namespace = str(account, 'namespace');
  if (namespace === '') {
    errs.push(required(child(path, 'namespace'), 'must specify namespace for service account'));
  } else {
    for (const msg of isDNS1123Label(namespace)) errs.push(invalid(child(path, 'namespace'), namespace, msg));
  }
}

/**
 * One list of a rule, as kube checks each: Required when empty (with `empty`'s words; no error
 * when `empty` is undefined), `'*'` only alone, and otherwise its members checked by `rest`.
 */
function checkRuleList(
  values: string[],
  path: string,
  what: string,
  empty: string | undefined,
  errs: FieldError[],
  rest?: (values: string[]) => void,
): void {
  if (values.length === 0) {
    if (empty !== undefined) errs.push(required(path, empty));
  } else if (values.includes('*')) {
    if (values.length > 1) {
      errs.push(invalid(path, goStringSlice(values), `if '*' is present, must not specify other ${what}`));
    }
  } else {
    rest?.(values);
  }
}

function validateVerbs(rule: JsonObject, path: string, errs: FieldError[]): void {
  const verbsPath = child(path, 'verbs');
  checkRuleList(
    strings(rule, 'verbs'),
    verbsPath,
    'verbs',
    'verbs must contain at least one value',
    errs,
    (verbs) => {
      if (!verbs.every((v) => VERBS.includes(v)))
        errs.push(notSupported(verbsPath, goStringSlice(verbs), VERBS));
    },
  );
}

function validateResourceRule(rule: JsonObject, path: string, errs: FieldError[]): void {
  validateVerbs(rule, path, errs);
  const list = (field: string, what: string, empty: string | undefined, rest?: (v: string[]) => void): void =>
    checkRuleList(strings(rule, field), child(path, field), what, empty, errs, rest);
  list('apiGroups', 'api groups', 'resource rules must supply at least one api group');
  list('resources', 'resources', 'resource rules must supply at least one resource');
  const clusterScoped = rule['clusterScope'] === true;
  list(
    'namespaces',
    'namespaces',
    clusterScoped
      ? undefined
      : 'resource rules that are not cluster scoped must supply at least one namespace',
    (namespaces) =>
      namespaces.forEach((ns, i) => {
        for (const msg of isDNS1123Label(ns)) {
          errs.push(invalid(index(child(path, 'namespaces'), i), ns, NS_ERR_INTRO + msg));
        }
      }),
  );
}

function validateNonResourceRule(rule: JsonObject, path: string, errs: FieldError[]): void {
  validateVerbs(rule, path, errs);
  const urlsPath = child(path, 'nonResourceURLs');
  checkRuleList(
    strings(rule, 'nonResourceURLs'),
    urlsPath,
    'non-resource URLs',
    'nonResourceURLs must contain at least one value',
    errs,
    (urls) =>
      urls.forEach((url, i) => {
        const problem = nonResourceURLProblem(url);
        if (problem !== undefined) errs.push(invalid(index(urlsPath, i), url, problem));
      }),
  );
}

/** kube's `ValidateNonResourceURLPath`. */
function nonResourceURLProblem(path: string): string | undefined {
  if (path === '') return 'must not be empty';
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return 'must start with slash';
  if (path.includes(' ')) return 'must not contain white-space';
  if (path.includes('//')) return 'must not contain double slash';
  const wildcards = path.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !path.endsWith('/*')))
    return 'wildcard can only do suffix matching';
  return undefined;
}

/** Status conditions of either kind: each with a type, no type twice. */
function validateConditions(status: JsonObject | undefined, errs: FieldError[]): void {
  const seen = new Set<string>();
  objects(status, 'conditions').forEach((condition, i) => {
    const path = index('status.conditions', i);
    const type = str(condition, 'type');
    if (seen.has(type)) errs.push(duplicate(child(path, 'type'), type));
    seen.add(type);
    if (type === '') errs.push(required(child(path, 'type'), 'must not be empty'));
  });
}

/**
 * Whether two specs are equal as kube's `Semantic.DeepEqual` compares the decoded internal
 * objects: absent or null equals Go's zero value (`0`, `false`, `""`, an empty list or map),
 * except in a pointer field ({@link POINTER_FIELDS}), where only absent equals absent.
 */
function goEqual(a: unknown, b: unknown, pointer = false): boolean {
  const absentA = a === undefined || a === null;
  const absentB = b === undefined || b === null;
  if (absentA || absentB) return pointer ? absentA && absentB : isGoZero(absentA ? b : a);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => goEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => goEqual(a[k], b[k], POINTER_FIELDS.has(k)));
  }
  return a === b;
}

/** The pointer fields of the internal spec types (a set one differs from an absent one). */
const POINTER_FIELDS = new Set([
  'limited',
  'exempt',
  'lendablePercent',
  'borrowingLimitPercent',
  'nominalConcurrencyShares',
  'queuing',
  'distinguisherMethod',
  'user',
  'group',
  'serviceAccount',
]);

function isGoZero(v: unknown): boolean {
  if (v === undefined || v === null || v === 0 || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.values(v).every(isGoZero);
  return false;
}

/** Go's `%#v` of a struct: `pkg.Type{Field:value, ...}`. */
function goStruct(type: string, fields: readonly (readonly [string, string])[]): string {
  return `flowcontrol.${type}{${fields.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

/** A pointer field: `(*pkg.Type)(nil)`, or what it points to (see the module comment). */
function goPointer(type: string, value: JsonObject | undefined, render: (v: JsonObject) => string): string {
  return value === undefined ? `(*flowcontrol.${type})(nil)` : `&${render(value)}`;
}

const goString = (o: JsonObject | undefined, k: string): string => JSON.stringify(str(o, k));
const goInt = (o: JsonObject | undefined, k: string): string => String(num(o, k) ?? 0);
const goIntPointer = (o: JsonObject | undefined, k: string): string =>
  num(o, k) === undefined ? '(*int32)(nil)' : `&${String(num(o, k))}`;
const goStrings = (o: JsonObject | undefined, k: string): string =>
  has(o, k) ? goStringSlice(strings(o, k)).text : '[]string(nil)';

/** A list field `k` of `o`: `nil` when absent, as Go prints a slice never set. */
function goSlice(
  type: string,
  o: JsonObject | undefined,
  k: string,
  render: (v: JsonObject) => string,
): string {
  if (!has(o, k)) return `[]flowcontrol.${type}(nil)`;
  return `[]flowcontrol.${type}{${objects(o, k).map(render).join(', ')}}`;
}

function levelSpecValue(spec: JsonObject): GoValue {
  const limited = (l: JsonObject): string =>
    goStruct('LimitedPriorityLevelConfiguration', [
      ['NominalConcurrencyShares', goInt(l, 'nominalConcurrencyShares')],
      [
        'LimitResponse',
        goStruct('LimitResponse', [
          ['Type', goString(obj(l, 'limitResponse'), 'type')],
          [
            'Queuing',
            goPointer('QueuingConfiguration', obj(obj(l, 'limitResponse'), 'queuing'), (q) =>
              goStruct('QueuingConfiguration', [
                ['Queues', goInt(q, 'queues')],
                ['HandSize', goInt(q, 'handSize')],
                ['QueueLengthLimit', goInt(q, 'queueLengthLimit')],
              ]),
            ),
          ],
        ]),
      ],
      ['LendablePercent', goIntPointer(l, 'lendablePercent')],
      ['BorrowingLimitPercent', goIntPointer(l, 'borrowingLimitPercent')],
    ]);
  const exempt = (e: JsonObject): string =>
    goStruct('ExemptPriorityLevelConfiguration', [
      ['NominalConcurrencyShares', goIntPointer(e, 'nominalConcurrencyShares')],
      ['LendablePercent', goIntPointer(e, 'lendablePercent')],
    ]);
  return new GoValue(
    goStruct('PriorityLevelConfigurationSpec', [
      ['Type', goString(spec, 'type')],
      ['Limited', goPointer('LimitedPriorityLevelConfiguration', obj(spec, 'limited'), limited)],
      ['Exempt', goPointer('ExemptPriorityLevelConfiguration', obj(spec, 'exempt'), exempt)],
    ]),
  );
}

function schemaSpecValue(spec: JsonObject): GoValue {
  const named = (type: string) => (v: JsonObject) => goStruct(type, [['Name', goString(v, 'name')]]);
  const subject = (s: JsonObject): string =>
    goStruct('Subject', [
      ['Kind', goString(s, 'kind')],
      ['User', goPointer('UserSubject', obj(s, 'user'), named('UserSubject'))],
      ['Group', goPointer('GroupSubject', obj(s, 'group'), named('GroupSubject'))],
      [
        'ServiceAccount',
        goPointer('ServiceAccountSubject', obj(s, 'serviceAccount'), (a) =>
          goStruct('ServiceAccountSubject', [
            ['Namespace', goString(a, 'namespace')],
            ['Name', goString(a, 'name')],
          ]),
        ),
      ],
    ]);
  const resourceRule = (r: JsonObject): string =>
    goStruct('ResourcePolicyRule', [
      ['Verbs', goStrings(r, 'verbs')],
      ['APIGroups', goStrings(r, 'apiGroups')],
      ['Resources', goStrings(r, 'resources')],
      ['ClusterScope', String(r['clusterScope'] === true)],
      ['Namespaces', goStrings(r, 'namespaces')],
    ]);
  const nonResourceRule = (r: JsonObject): string =>
    goStruct('NonResourcePolicyRule', [
      ['Verbs', goStrings(r, 'verbs')],
      ['NonResourceURLs', goStrings(r, 'nonResourceURLs')],
    ]);
  const rule = (r: JsonObject): string =>
    goStruct('PolicyRulesWithSubjects', [
      ['Subjects', goSlice('Subject', r, 'subjects', subject)],
      ['ResourceRules', goSlice('ResourcePolicyRule', r, 'resourceRules', resourceRule)],
      ['NonResourceRules', goSlice('NonResourcePolicyRule', r, 'nonResourceRules', nonResourceRule)],
    ]);
  return new GoValue(
    goStruct('FlowSchemaSpec', [
      [
        'PriorityLevelConfiguration',
        named('PriorityLevelConfigurationReference')(obj(spec, 'priorityLevelConfiguration') ?? {}),
      ],
      ['MatchingPrecedence', goInt(spec, 'matchingPrecedence')],
      [
        'DistinguisherMethod',
        goPointer('FlowDistinguisherMethod', obj(spec, 'distinguisherMethod'), (d) =>
          goStruct('FlowDistinguisherMethod', [['Type', goString(d, 'type')]]),
        ),
      ],
      ['Rules', goSlice('PolicyRulesWithSubjects', spec, 'rules', rule)],
    ]),
  );
}
