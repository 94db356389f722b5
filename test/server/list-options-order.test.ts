/**
 * List options with several faults are refused for the fault kube-apiserver v1.33 names first
 * (integers, selectors' syntax, the options together with every fault at once, the selector's
 * fields, then the version; a continue token before the version), on lists, watches and
 * deletecollection alike. Every expected answer below was read from kube-apiserver v1.33.13.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';

const MATCH_NEEDS_VERSION =
  'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided';
const MATCH_WITH_CONTINUE =
  'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided';
const MATCH_BAD_LIST =
  'resourceVersionMatch: Unsupported value: "Bad": supported values: "Exact", "NotOlderThan", ""';
const SEND_ON_LIST = 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list';
const EXACT_ZERO =
  'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"';
const WATCH_MATCH_NEEDS_SEND =
  'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided';
const BAD_RV =
  'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax';
const UNKNOWN_FIELD = '"foo" is not a known field selector: only "metadata.name", "metadata.namespace"';
const BAD_LABELS = "unable to parse requirement: found '=', expected: identifier";

/** kube's 422 for ListOptions with `errs`, one or several. */
function invalidOptions(...errs: string[]): string {
  const list = errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
  return `ListOptions.meta.k8s.io "" is invalid: ${list}`;
}

let s: ResourceApp;

beforeEach(async () => {
  s = await startResourceApp({ store: await openMemoryStore() });
  for (const name of ['a', 'b', 'c']) {
    const r = await s.request(json('POST', CM, { metadata: { name } }));
    expect(r.statusCode, r.body).toBe(201);
  }
});

afterEach(async () => {
  await s.close();
});

async function answer(method: 'GET' | 'DELETE', query: string): Promise<[number, string]> {
  const r = await s.request({ method, url: `${CM}?${query}` });
  return [r.statusCode, (r.json() as KObj & { message?: string }).message ?? ''];
}

describe.each(['GET', 'DELETE'] as const)('%s on a collection', (method) => {
  it.each([
    ['timeoutSeconds=y&limit=x', 400, 'strconv.ParseInt: parsing "y": invalid syntax'],
    ['labelSelector=a%3D%3D%3Db&limit=x', 400, 'strconv.ParseInt: parsing "x": invalid syntax'],
    ['labelSelector=a%3D%3D%3Db&resourceVersionMatch=Bad', 400, BAD_LABELS],
    ['resourceVersion=abc&resourceVersionMatch=Bad', 422, invalidOptions(MATCH_BAD_LIST)],
    [
      'resourceVersionMatch=Bad&continue=x',
      422,
      invalidOptions(MATCH_NEEDS_VERSION, MATCH_WITH_CONTINUE, MATCH_BAD_LIST),
    ],
    [
      'resourceVersionMatch=Exact&sendInitialEvents=true',
      422,
      invalidOptions(MATCH_NEEDS_VERSION, SEND_ON_LIST),
    ],
    ['resourceVersion=abc&sendInitialEvents=', 422, invalidOptions(SEND_ON_LIST)],
    [
      'resourceVersion=abc&resourceVersionMatch=NotOlderThan&continue=x',
      422,
      invalidOptions(MATCH_WITH_CONTINUE),
    ],
    [
      'resourceVersionMatch=Exact&resourceVersion=0&continue=x',
      422,
      invalidOptions(MATCH_WITH_CONTINUE, EXACT_ZERO),
    ],
    [
      'fieldSelector=foo%3Dbar&resourceVersionMatch=Bad',
      422,
      invalidOptions(MATCH_NEEDS_VERSION, MATCH_BAD_LIST),
    ],
    ['fieldSelector=foo%3Dbar&resourceVersion=abc', 400, UNKNOWN_FIELD],
    ['resourceVersion=abc&limit=5', 400, BAD_RV],
  ])('%s: %i', async (query, code, message) => {
    expect(await answer(method, query)).toEqual([code, message]);
  });

  it('a continue token is checked before the version that came with it', async () => {
    const [code, message] = await answer(method, 'continue=garbage&resourceVersion=abc');
    expect(code).toBe(400);
    expect(message).toMatch(/^invalid continue token: continue key is not valid: /);
    const first = await s.request(json('GET', `${CM}?limit=1`));
    const token = encodeURIComponent(first.json().metadata.continue ?? '');
    expect(await answer(method, `continue=${token}&resourceVersion=abc`)).toEqual([
      400,
      'specifying resource version is not allowed when using continue',
    ]);
  });
});

describe('deletecollection reads as a list', () => {
  it('deletes one page under limit, and answers its continue token', async () => {
    const r = await s.request({ method: 'DELETE', url: `${CM}?limit=1` });
    expect(r.statusCode, r.body).toBe(200);
    const answered = r.json() as KObj & { items: KObj[] };
    expect(answered.items.map((o) => o.metadata.name)).toEqual(['a']);
    expect(answered.metadata.continue).toBeTruthy();
    const left = (await s.request(json('GET', CM))).json() as KObj & { items: KObj[] };
    expect(left.items.map((o) => o.metadata.name)).toEqual(['b', 'c']);

    const rest = await s.request({
      method: 'DELETE',
      url: `${CM}?continue=${encodeURIComponent(answered.metadata.continue ?? '')}&resourceVersion=0`,
    });
    expect(rest.statusCode, rest.body).toBe(200);
    const after = (await s.request(json('GET', CM))).json() as KObj & { items: KObj[] };
    expect(after.items).toEqual([]);
  });
});

describe('watch', () => {
  it.each([
    ['watch=1&timeoutSeconds=y&limit=x', 400, 'strconv.ParseInt: parsing "y": invalid syntax'],
    [
      'watch=1&resourceVersion=abc&resourceVersionMatch=Bad',
      422,
      invalidOptions(
        WATCH_MATCH_NEEDS_SEND,
        'resourceVersionMatch: Unsupported value: "Bad": supported values: "NotOlderThan"',
      ),
    ],
    [
      'watch=1&resourceVersionMatch=Exact&continue=x',
      422,
      invalidOptions(
        WATCH_MATCH_NEEDS_SEND,
        'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"',
        MATCH_WITH_CONTINUE,
      ),
    ],
    ['watch=1&labelSelector=a%3D%3D%3Db&resourceVersionMatch=Bad', 400, BAD_LABELS],
    ['watch=1&fieldSelector=foo%3Dbar&resourceVersion=abc', 400, UNKNOWN_FIELD],
    // kube answers 500 with this text; a malformed version is the client's fault.
    [
      'watch=1&resourceVersion=abc',
      400,
      'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    ],
  ])('%s: %i', async (query, code, message) => {
    expect(await answer('GET', query)).toEqual([code, message]);
  });
});
