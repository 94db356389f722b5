/**
 * NamespaceLifecycle's lookups (src/resource/namespace-admission.ts): only an active namespace in
 * a ready cache, not deleted through this server within the last 30 s, admits without storage.
 */
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../../src/registry/types.js';
import { FORCE_LIVE_LOOKUP_MS, NamespaceAdmission } from '../../src/resource/namespace-admission.js';
import { ObjectVersion } from '../../src/watchcache/object-version.js';

const NS_TYPE = { plural: 'namespaces', group: '', storageResource: 'namespaces' } as ResourceType;
const KEY = '/namespaces/team';

function version(extra: Record<string, unknown>): ObjectVersion {
  const obj = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'team' }, ...extra };
  return new ObjectVersion(KEY, Buffer.from(JSON.stringify(obj)), 7n);
}

function source(ready: boolean, v: ObjectVersion | undefined) {
  return { for: () => ({ ready, get: (key: string) => (key === KEY ? v : undefined) }) };
}

describe('NamespaceAdmission.activeInCache', () => {
  const active = version({ status: { phase: 'Active' } });

  it('admits an active namespace from a ready cache', () => {
    expect(new NamespaceAdmission(source(true, active)).activeInCache(NS_TYPE, 'team', KEY)).toBe(true);
  });

  it('reads storage without caches, while warming, or for a namespace the cache lacks', () => {
    expect(new NamespaceAdmission(undefined).activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
    expect(new NamespaceAdmission(source(false, active)).activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
    expect(new NamespaceAdmission(source(true, undefined)).activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
  });

  it('reads storage for a terminating namespace or one with a deletionTimestamp', () => {
    const terminating = version({ status: { phase: 'Terminating' } });
    const marked = version({ metadata: { name: 'team', deletionTimestamp: '2026-01-01T00:00:00Z' } });
    expect(new NamespaceAdmission(source(true, terminating)).activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
    expect(new NamespaceAdmission(source(true, marked)).activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
  });

  it('reads storage for 30 s after a local DELETE of the namespace, then the cache again', () => {
    let now = 1_000;
    const admission = new NamespaceAdmission(source(true, active), () => now);
    admission.deleted('team');
    expect(admission.activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
    now += FORCE_LIVE_LOOKUP_MS - 1;
    expect(admission.activeInCache(NS_TYPE, 'team', KEY)).toBe(false);
    now += 1;
    expect(admission.activeInCache(NS_TYPE, 'team', KEY)).toBe(true);
  });
});
