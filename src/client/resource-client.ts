/**
 * One resource's verbs over a {@link Client}: get, list, create, update (and status), patch,
 * delete, deletecollection, watch, and subresources. URLs follow kube's layout:
 * `/api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`, `/apis/<group>/<version>/...`.
 */
import type { ListMeta } from '../api/types/meta-v1.js';
import type { Client, TypedObject } from './client.js';
import { queryString } from './client.js';
import { groupResource, type ResourceRef } from './resources.js';
import { FailedWatchStream, HttpWatchStream, type WatchStream } from './watch.js';

/** A list response. */
export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta & { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Options of list, watch and deletecollection. */
export interface ListOptions {
  /** Namespaced resources: this namespace; absent: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

/** Options of a watch. */
export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
  /** WatchList: start with the state as ADDED events, then a bookmark marked initial-events-end. */
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

/** Options of create and update. */
export interface WriteOptions {
  namespace?: string;
  fieldManager?: string;
  dryRun?: boolean;
}

/** Options of patch; `apply` needs `fieldManager`. */
export interface PatchOptions extends WriteOptions {
  type: 'merge' | 'strategic' | 'json' | 'apply';
  subresource?: string;
  force?: boolean;
}

/** Options of delete. */
export interface DeleteOptions {
  namespace?: string;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

const PATCH_TYPES: Readonly<Record<PatchOptions['type'], string>> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

function listQuery(opts: ListOptions): Record<string, string> {
  const q: Record<string, string> = {};
  if (opts.labelSelector !== undefined && opts.labelSelector !== '') q['labelSelector'] = opts.labelSelector;
  if (opts.fieldSelector !== undefined && opts.fieldSelector !== '') q['fieldSelector'] = opts.fieldSelector;
  if (opts.limit !== undefined && opts.limit > 0) q['limit'] = String(opts.limit);
  if (opts.continue !== undefined && opts.continue !== '') q['continue'] = opts.continue;
  if (opts.resourceVersion !== undefined) q['resourceVersion'] = opts.resourceVersion;
  if (opts.resourceVersionMatch !== undefined) q['resourceVersionMatch'] = opts.resourceVersionMatch;
  return q;
}

function writeQuery(opts: WriteOptions | undefined): Record<string, string> | undefined {
  if (opts === undefined) return undefined;
  const q: Record<string, string> = {};
  if (opts.fieldManager !== undefined) q['fieldManager'] = opts.fieldManager;
  if (opts.dryRun === true) q['dryRun'] = 'All';
  return q;
}

function deleteBody(opts: DeleteOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (opts.propagationPolicy !== undefined) body['propagationPolicy'] = opts.propagationPolicy;
  if (opts.gracePeriodSeconds !== undefined) body['gracePeriodSeconds'] = opts.gracePeriodSeconds;
  if (opts.preconditions !== undefined) body['preconditions'] = opts.preconditions;
  if (opts.dryRun === true) body['dryRun'] = ['All'];
  return body;
}

/** The client of one resource. Get it from {@link Client.resource}. */
export class ResourceClient<T extends TypedObject> {
  readonly client: Client;
  readonly ref: ResourceRef;
  readonly #base: string;

  constructor(client: Client, ref: ResourceRef) {
    this.client = client;
    this.ref = ref;
    this.#base = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  }

  /** The collection path; `namespace` is required for single objects of namespaced resources. */
  path(namespace: string | undefined, name?: string, subresource?: string): string {
    let p = this.#base;
    if (this.ref.namespaced) {
      if (namespace !== undefined && namespace !== '') p += `/namespaces/${encodeURIComponent(namespace)}`;
      else if (name !== undefined)
        throw new TypeError(`${groupResource(this.ref)} ${name}: a namespace is required`);
    }
    p += `/${this.ref.resource}`;
    if (name !== undefined) {
      if (name === '') throw new TypeError(`${groupResource(this.ref)}: a name is required`);
      p += `/${encodeURIComponent(name)}`;
    }
    if (subresource !== undefined) p += `/${subresource}`;
    return p;
  }

  #what(name: string, namespace: string | undefined): string {
    const gr = groupResource(this.ref);
    return namespace === undefined ? `${gr} ${name}` : `${gr} ${namespace}/${name}`;
  }

  /** GET one object; `resourceVersion: '0'` may be served from the server's cache. */
  get(name: string, opts: { namespace?: string; resourceVersion?: string } = {}): Promise<T> {
    return this.client.json<T>(
      {
        method: 'GET',
        path: this.path(opts.namespace, name),
        ...(opts.resourceVersion === undefined ? {} : { query: { resourceVersion: opts.resourceVersion } }),
      },
      `get ${this.#what(name, opts.namespace)}`,
    );
  }

  /** One page of the list (all of it without `limit`); all namespaces without `namespace`. */
  list(opts: ListOptions = {}): Promise<ObjectList<T>> {
    return this.client.json<ObjectList<T>>(
      { method: 'GET', path: this.path(opts.namespace), query: listQuery(opts) },
      `list ${groupResource(this.ref)}`,
    );
  }

  /** POST; the namespace comes from `opts.namespace`, else `obj.metadata.namespace`. */
  create(obj: T, opts?: WriteOptions): Promise<T> {
    const ns = opts?.namespace ?? obj.metadata?.namespace;
    const name = obj.metadata?.name ?? obj.metadata?.generateName ?? '';
    const q = writeQuery(opts);
    return this.client.json<T>(
      { method: 'POST', path: this.path(ns), body: obj, ...(q === undefined ? {} : { query: q }) },
      `create ${this.#what(name, ns)}`,
    );
  }

  #put(obj: T, opts: WriteOptions | undefined, subresource: string | undefined, verb: string): Promise<T> {
    const ns = opts?.namespace ?? obj.metadata?.namespace;
    const name = obj.metadata?.name ?? '';
    const q = writeQuery(opts);
    return this.client.json<T>(
      {
        method: 'PUT',
        path: this.path(ns, name, subresource),
        body: obj,
        ...(q === undefined ? {} : { query: q }),
      },
      `${verb} ${this.#what(name, ns)}`,
    );
  }

  /** PUT; optimistic concurrency through `obj.metadata.resourceVersion` (409 Conflict when stale). */
  update(obj: T, opts?: WriteOptions): Promise<T> {
    return this.#put(obj, opts, undefined, 'update');
  }

  /** PUT `.../status`. */
  updateStatus(obj: T, opts?: WriteOptions): Promise<T> {
    return this.#put(obj, opts, 'status', 'update status of');
  }

  /** PATCH with the given patch type (`apply`: server-side apply; needs `fieldManager`). */
  patch(name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    const q = writeQuery(opts) ?? {};
    if (opts.force === true) q['force'] = 'true';
    return this.client.json<T>(
      {
        method: 'PATCH',
        path: this.path(opts.namespace, name, opts.subresource),
        query: q,
        body: typeof patch === 'string' || Buffer.isBuffer(patch) ? patch : JSON.stringify(patch),
        contentType: PATCH_TYPES[opts.type],
      },
      `patch ${this.#what(name, opts.namespace)}`,
    );
  }

  /** DELETE one object. 404 is an error (`isNotFound`): the caller decides. */
  async delete(name: string, opts: DeleteOptions = {}): Promise<void> {
    await this.client.json<unknown>(
      { method: 'DELETE', path: this.path(opts.namespace, name), body: deleteBody(opts) },
      `delete ${this.#what(name, opts.namespace)}`,
    );
  }

  /** DELETE the collection (filtered by the list options). */
  async deleteCollection(opts: ListOptions & DeleteOptions = {}): Promise<void> {
    await this.client.json<unknown>(
      { method: 'DELETE', path: this.path(opts.namespace), query: listQuery(opts), body: deleteBody(opts) },
      `deletecollection ${groupResource(this.ref)}`,
    );
  }

  /**
   * Opens a watch (not rate limited, as in client-go). Connection failures and a non-200
   * response are thrown by the first `next()`; an `ERROR` event by the `next()` that meets it.
   */
  watch(opts: WatchOptions = {}): WatchStream<T> {
    const q = listQuery(opts);
    q['watch'] = '1';
    if (opts.allowWatchBookmarks === true) q['allowWatchBookmarks'] = 'true';
    if (opts.sendInitialEvents !== undefined) q['sendInitialEvents'] = String(opts.sendInitialEvents);
    if (opts.timeoutSeconds !== undefined) q['timeoutSeconds'] = String(opts.timeoutSeconds);
    const context = `watch ${groupResource(this.ref)}`;
    try {
      const stream = this.client.transport.open({
        method: 'GET',
        path: this.path(opts.namespace) + queryString(q),
        headers: { accept: 'application/json' },
      });
      return new HttpWatchStream<T>(stream, context);
    } catch (err) {
      return new FailedWatchStream<T>(err as Error);
    }
  }

  /** POST to a subresource (`pods/binding`, `pods/eviction`, `serviceaccounts/token`, ...). */
  createSubresource<R>(
    name: string,
    subresource: string,
    body: unknown,
    opts: { namespace?: string } = {},
  ): Promise<R> {
    return this.client.json<R>(
      { method: 'POST', path: this.path(opts.namespace, name, subresource), body },
      `create ${subresource} of ${this.#what(name, opts.namespace)}`,
    );
  }

  /** GET a subresource (`status`, `scale`, ...). */
  getSubresource<R>(name: string, subresource: string, opts: { namespace?: string } = {}): Promise<R> {
    return this.client.json<R>(
      { method: 'GET', path: this.path(opts.namespace, name, subresource) },
      `get ${subresource} of ${this.#what(name, opts.namespace)}`,
    );
  }

  /** PUT a subresource (`status`, `scale`, `finalize`, `approval`, ...). */
  updateSubresource<R>(
    name: string,
    subresource: string,
    body: unknown,
    opts: { namespace?: string } = {},
  ): Promise<R> {
    return this.client.json<R>(
      { method: 'PUT', path: this.path(opts.namespace, name, subresource), body },
      `update ${subresource} of ${this.#what(name, opts.namespace)}`,
    );
  }
}
