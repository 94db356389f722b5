/**
 * Query parameters read as kube-apiserver v1.33 reads them (each answer below was read from it):
 * booleans false only for `0` and `false` in any case, integers and resourceVersions by Go's
 * strconv, with its errors.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { boolParam, intParam, revisionParam } from '../../src/resource/query.js';
import { readCollectionRequest } from '../../src/resource/list-options.js';
import type { Query } from '../../src/resource/query.js';

const CONFIGMAP = { group: '', kind: 'ConfigMap' };
const listOf = (query: Query): unknown => readCollectionRequest(query, CONFIGMAP, undefined, false);

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(400);
    return (err as Error).message;
  }
  return 'accepted';
}

describe('list options', () => {
  it('are checked as kube checks them, even those a list ignores', () => {
    expect(refusal(() => listOf({ timeoutSeconds: 'abc' }))).toBe(
      'strconv.ParseInt: parsing "abc": invalid syntax',
    );
    expect(refusal422(() => listOf({ resourceVersion: '1', resourceVersionMatch: 'Bogus' }))).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
    );
  });
});

function refusal422(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect((err as ApiError).code).toBe(422);
    return (err as Error).message;
  }
  return 'accepted';
}

describe('query parameters', () => {
  it('booleans: absent, 0 and false (any case) are false; anything else is true', () => {
    expect(boolParam({}, 'watch')).toBe(false);
    for (const v of ['0', 'false', 'FALSE', 'False']) expect(boolParam({ watch: v }, 'watch'), v).toBe(false);
    for (const v of ['', '1', 'true', 'yes', 'No', 'maybe'])
      expect(boolParam({ watch: v }, 'watch'), v).toBe(true);
    expect(boolParam({ watch: ['false', 'true'] }, 'watch')).toBe(false);
  });

  it("integers are Go's ParseInt: signs allowed, 64 bits, empty refused", () => {
    expect(intParam({}, 'limit')).toBeUndefined();
    expect(intParam({ limit: '+5' }, 'limit')).toBe(5);
    expect(intParam({ limit: '-1' }, 'limit')).toBe(-1);
    expect(refusal(() => intParam({ limit: 'abc' }, 'limit'))).toBe(
      'strconv.ParseInt: parsing "abc": invalid syntax',
    );
    expect(refusal(() => intParam({ limit: '' }, 'limit'))).toBe(
      'strconv.ParseInt: parsing "": invalid syntax',
    );
    expect(refusal(() => intParam({ limit: '1.5' }, 'limit'))).toBe(
      'strconv.ParseInt: parsing "1.5": invalid syntax',
    );
    expect(refusal(() => intParam({ limit: '99999999999999999999' }, 'limit'))).toBe(
      'strconv.ParseInt: parsing "99999999999999999999": value out of range',
    );
  });

  it("resourceVersions are Go's ParseUint, described as kube's lists and reads describe them", () => {
    expect(revisionParam(undefined)).toBeUndefined();
    expect(revisionParam('')).toBeUndefined();
    expect(revisionParam('18446744073709551615')).toBe(18446744073709551615n);
    expect(refusal(() => revisionParam('abc'))).toBe(
      'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
    expect(refusal(() => revisionParam('+5'))).toBe(
      'invalid resource version: resourceVersion: Invalid value: "+5": strconv.ParseUint: parsing "+5": invalid syntax',
    );
    expect(refusal(() => revisionParam('99999999999999999999999', ''))).toBe(
      'resourceVersion: Invalid value: "99999999999999999999999": strconv.ParseUint: parsing "99999999999999999999999": value out of range',
    );
  });
});
