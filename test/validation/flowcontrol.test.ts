/**
 * PriorityLevelConfiguration and FlowSchema validation as kube-apiserver v1.33: every message
 * below is kube-apiserver v1.33.13's answer to the same object (sent with dryRun=All).
 */
import { describe, expect, it } from 'vitest';
import {
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
} from '../../src/api/flowcontrol-bootstrap.js';
import { createErrors, defaulted, expectValid, updateErrors } from './helpers.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';
const PLC = 'PriorityLevelConfiguration';

function level(name: string, spec: unknown, annotations?: Record<string, string>): Record<string, unknown> {
  return { metadata: { name, ...(annotations === undefined ? {} : { annotations }) }, spec };
}

const schema = (name: string, spec: unknown): Record<string, unknown> => ({ metadata: { name }, spec });

/** Each error as `field: message`, in order. */
function messages(errs: readonly { field: string; message: string }[]): string[] {
  return errs.map((e) => `${e.field}: ${e.message}`);
}

const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const rules = [{ verbs: ['get'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }];

describe('flowcontrol validation', () => {
  it("accepts every object of kube's bootstrap set", () => {
    for (const o of [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]) {
      expectValid(createErrors(GROUP, PLC, level(o.name, o.spec)));
    }
    for (const o of [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]) {
      expectValid(createErrors(GROUP, 'FlowSchema', schema(o.name, o.spec)));
    }
  });

  it('levels: the type matches the name, and only the type’s own limits are given', () => {
    expect(messages(createErrors(GROUP, PLC, level('x', { type: 'Exempt', exempt: {} })))).toEqual([
      `spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'`,
    ]);
    expect(
      messages(
        createErrors(
          GROUP,
          PLC,
          level('x', {
            type: 'Limited',
            exempt: { nominalConcurrencyShares: -1 },
            limited: { borrowingLimitPercent: -3, limitResponse: { type: 'Reject' } },
          }),
        ),
      ),
    ).toEqual([
      'spec.exempt: Forbidden: must be nil if the type is Limited',
      'spec.limited.borrowingLimitPercent: Invalid value: -3: if specified, must be a non-negative integer',
    ]);
    const queuing = { queues: 20000000, handSize: 3, queueLengthLimit: -1 };
    const queued = level('x', { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing } } });
    expect(messages(createErrors(GROUP, PLC, queued))).toEqual([
      'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive',
      'spec.limited.limitResponse.queuing.queues: Invalid value: 20000000: must not be greater than 10000000',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 3: required entropy bits of deckSize 20000000 and handSize 3 should not be greater than 60',
    ]);
    expect(
      messages(
        createErrors(
          GROUP,
          PLC,
          level(
            'x',
            { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } },
            {
              'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares': 'true',
            },
          ),
        ),
      ),
    ).toEqual([
      "metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden",
    ]);
  });

  it("the mandatory levels keep kube's fixed specs; the exempt level may change its exempt field only", () => {
    const catchAll = MANDATORY_PRIORITY_LEVELS.find((o) => o.name === 'catch-all');
    const old = defaulted(GROUP, PLC, level('catch-all', catchAll?.spec));
    expectValid(updateErrors(GROUP, PLC, level('catch-all', catchAll?.spec), old));
    const borrowing = {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
    };
    expect(messages(updateErrors(GROUP, PLC, level('catch-all', borrowing), old))).toEqual([
      'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:&flowcontrol.LimitedPriorityLevelConfiguration{NominalConcurrencyShares:5, LimitResponse:flowcontrol.LimitResponse{Type:"Reject", Queuing:(*flowcontrol.QueuingConfiguration)(nil)}, LendablePercent:&0, BorrowingLimitPercent:&0}, Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of \'catch-all\' must equal the fixed value',
    ]);
    expectValid(
      createErrors(GROUP, PLC, level('exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 3 } })),
    );
    const limitedExempt = { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } };
    expect(messages(createErrors(GROUP, PLC, level('exempt', limitedExempt)))).toEqual([
      `spec.type: Invalid value: "Limited": type must be 'Exempt' if and only if name is 'exempt'`,
      'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:&flowcontrol.LimitedPriorityLevelConfiguration{NominalConcurrencyShares:30, LimitResponse:flowcontrol.LimitResponse{Type:"Reject", Queuing:(*flowcontrol.QueuingConfiguration)(nil)}, LendablePercent:&0, BorrowingLimitPercent:(*int32)(nil)}, Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of \'exempt\' except the \'spec.exempt\' field must equal the fixed value',
    ]);
  });

  it('schemas: precedence, distinguisher, level name, subjects and rules', () => {
    const spec = {
      priorityLevelConfiguration: { name: 'Bad_Name' },
      matchingPrecedence: 1,
      distinguisherMethod: { type: 'Foo' },
    };
    expect(messages(createErrors(GROUP, 'FlowSchema', schema('f', spec)))).toEqual([
      "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
      'spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"Foo"}: supported values: "ByNamespace", "ByUser"',
      `spec.priorityLevelConfiguration.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`,
    ]);
    const subjects = [
      { kind: 'Robot' },
      { kind: 'User' },
      {
        kind: 'User',
        user: { name: '' },
        group: { name: 'g' },
        serviceAccount: { name: 's', namespace: 'n' },
      },
      { kind: 'ServiceAccount', serviceAccount: { name: 'Bad_', namespace: '' } },
      { kind: 'Group', group: { name: 'g' }, user: { name: 'u' } },
    ];
    const withSubjects = { priorityLevelConfiguration: { name: 'x' }, rules: [{ subjects }] };
    expect(messages(createErrors(GROUP, 'FlowSchema', schema('f', withSubjects)))).toEqual([
      'spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"',
      "spec.rules[0].subjects[1].user: Required value: user is required when subject kind is 'User'",
      'spec.rules[0].subjects[2].user.name: Required value',
      "spec.rules[0].subjects[2].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
      "spec.rules[0].subjects[2].group: Forbidden: group is forbidden when subject kind is not 'Group'",
      `spec.rules[0].subjects[3].serviceAccount.name: Invalid value: "Bad_": ${SUBDOMAIN}`,
      'spec.rules[0].subjects[3].serviceAccount.namespace: Required value: must specify namespace for service account',
      "spec.rules[0].subjects[4].user: Forbidden: user is forbidden when subject kind is not 'User'",
      'spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty',
    ]);
    const badRules = {
      priorityLevelConfiguration: { name: 'x' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'u' } }],
          resourceRules: [
            { verbs: ['*', 'get'], apiGroups: ['*', 'apps'], resources: ['*'], namespaces: ['*'] },
            { verbs: ['fly'], apiGroups: ['a'], resources: ['b'], clusterScope: true },
            { verbs: ['get'], apiGroups: ['a'], resources: ['*', 'pods'], namespaces: ['Bad_NS', 'ok'] },
            { verbs: [], apiGroups: [], resources: [], namespaces: [] },
          ],
          nonResourceRules: [
            { verbs: ['get'], nonResourceURLs: ['', '/', 'x', '/a b', '/a//b', '/a*', '/ok/*'] },
          ],
        },
      ],
    };
    expect(messages(createErrors(GROUP, 'FlowSchema', schema('f', badRules)))).toEqual([
      `spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"*", "get"}: if '*' is present, must not specify other verbs`,
      `spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other api groups`,
      'spec.rules[0].resourceRules[1].verbs: Unsupported value: []string{"fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"',
      `spec.rules[0].resourceRules[2].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources`,
      `spec.rules[0].resourceRules[2].namespaces[0]: Invalid value: "Bad_NS": each member of this list must be '*' or a DNS-1123 label; ${LABEL}`,
      'spec.rules[0].resourceRules[3].verbs: Required value: verbs must contain at least one value',
      'spec.rules[0].resourceRules[3].apiGroups: Required value: resource rules must supply at least one api group',
      'spec.rules[0].resourceRules[3].resources: Required value: resource rules must supply at least one resource',
      'spec.rules[0].resourceRules[3].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "": must not be empty',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: "x": must start with slash',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: "/a b": must not contain white-space',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: "/a//b": must not contain double slash',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[5]: Invalid value: "/a*": wildcard can only do suffix matching',
    ]);
    expectValid(
      createErrors(
        GROUP,
        'FlowSchema',
        schema('f', {
          priorityLevelConfiguration: { name: 'x' },
          rules: [{ subjects: [{ kind: 'User', user: { name: 'u' } }], resourceRules: rules }],
        }),
      ),
    );
  });

  it('names are DNS subdomains, as kube v1.33 checks them for both kinds', () => {
    const spec = { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } };
    expect(messages(createErrors(GROUP, PLC, level('Bad_Name', spec)))).toEqual([
      `metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`,
    ]);
    const subject = { kind: 'User', user: { name: 'u' } };
    const fs = {
      priorityLevelConfiguration: { name: 'x' },
      rules: [{ subjects: [subject], resourceRules: rules }],
    };
    expect(messages(createErrors(GROUP, 'FlowSchema', schema('Bad_Name', fs)))).toEqual([
      `metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`,
    ]);
  });

  it("the mandatory schemas keep kube's fixed specs", () => {
    const catchAll = MANDATORY_FLOW_SCHEMAS.find((o) => o.name === 'catch-all');
    const changed = { ...(catchAll?.spec ?? {}), matchingPrecedence: 9999 };
    const [error] = createErrors(GROUP, 'FlowSchema', schema('catch-all', changed));
    expect(error?.field).toBe('spec');
    expect(error?.message).toMatch(
      /^Invalid value: flowcontrol\.FlowSchemaSpec\{PriorityLevelConfiguration:flowcontrol\.PriorityLevelConfigurationReference\{Name:"catch-all"\}, MatchingPrecedence:9999, .*: spec of 'catch-all' must equal the fixed value$/,
    );
  });
});
