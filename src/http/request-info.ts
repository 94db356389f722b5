/**
 * Request info: what a request is about (verb, group, version, resource, namespace, name,
 * subresource), parsed once from the path and query before authentication, so that every later
 * step (audit, flow control, authorization, the resource handler) reads the same answer.
 *
 * The rules are kube-apiserver's (`RequestInfoFactory`), so authorization decisions and audit
 * records match what clients and policies written for Kubernetes expect:
 * - `/api/{version}/...` and `/apis/{group}/{version}/...` with at least a resource are resource
 *   requests; everything else (`/healthz`, `/version`, `/api`, `/apis/apps/v1`) is not, and its
 *   verb is the lower-case HTTP method.
 * - `/namespaces/{ns}/{resource}/...` sets the namespace; `/namespaces/{ns}` and
 *   `/namespaces/{ns}/status|finalize` are the namespace object itself (namespace = its name).
 * - the legacy `/watch/` and `/proxy/` path prefixes set the verb.
 * - GET without a name is `list`, or `watch` with a `watch` query value other than `0`/`false`;
 *   a `fieldSelector` of `metadata.name=x` then sets the name. DELETE without a name is
 *   `deletecollection`.
 */

/** What a request is about; see the module comment for the rules. */
export interface RequestInfo {
  readonly isResourceRequest: boolean;
  /** The decoded URL path, without the query. */
  readonly path: string;
  /**
   * Resource requests: get, list, watch, create, update, patch, delete, deletecollection, proxy
   * (or '' for an HTTP method with no verb). Other requests: the lower-case HTTP method.
   */
  readonly verb: string;
  /** `api`, `apis`, or `''` for non-resource requests. */
  readonly apiPrefix: string;
  /** `''` for the core group. */
  readonly apiGroup: string;
  readonly apiVersion: string;
  /** `''` for cluster-scoped requests and requests across all namespaces. */
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** Path segments from the resource on (`[resource, name, subresource, ...]`). */
  readonly parts: readonly string[];
}

/** The parsed query as fastify gives it: repeated keys become arrays. */
export type QueryValues = Readonly<Record<string, string | readonly string[] | undefined>>;

const API_PREFIXES = new Set(['api', 'apis']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function first(v: string | readonly string[] | undefined): string | undefined {
  return typeof v === 'string' ? v : v?.[0];
}

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
}

function verbOfMethod(method: string): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

/**
 * The value `metadata.name` must equal under a field selector (`a=b,c==d`, with `\` escapes),
 * or undefined when the selector does not pin it. Malformed selectors pin nothing: the resource
 * handler reports them.
 */
export function exactNameFromFieldSelector(selector: string): string | undefined {
  let term = '';
  const terms: string[] = [];
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '\\' && i + 1 < selector.length) {
      term += c + (selector[i + 1] ?? '');
      i++;
    } else if (c === ',') {
      terms.push(term);
      term = '';
    } else {
      term += c;
    }
  }
  terms.push(term);
  for (const t of terms) {
    const m = /^\s*metadata\.name\s*(==|=)(.*)$/.exec(t);
    if (m?.[2] === undefined) continue;
    if (m[2].startsWith('=')) return undefined; // `===` is malformed
    return m[2].replace(/\\(.)/g, '$1');
  }
  return undefined;
}

/** kube's `IsValidPathSegmentName`: a name usable as one URL path segment. */
function isValidPathSegmentName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/** The path's segments, without leading and trailing slashes (scanned, not by regex: every request). */
function splitPath(path: string): string[] {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  return start === end ? [] : path.slice(start, end).split('/');
}

/**
 * Parses a request. `rawUrl` is the request target as received (path and optional query);
 * `query` the parsed query. Returns undefined when the path is not valid percent-encoding
 * (the caller answers 400).
 */
export function parseRequestInfo(
  method: string,
  rawUrl: string,
  query: QueryValues,
): RequestInfo | undefined {
  const q = rawUrl.indexOf('?');
  const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
  let path: string;
  try {
    path = rawPath.includes('%') ? decodeURIComponent(rawPath) : rawPath;
  } catch {
    return undefined;
  }
  let parts = splitPath(path);
  if (parts.length < 3 || !API_PREFIXES.has(parts[0] ?? '')) return nonResource(path, method);
  const apiPrefix = parts[0] ?? '';
  parts = parts.slice(1);
  let apiGroup = '';
  if (apiPrefix === 'apis') {
    if (parts.length < 3) return nonResource(path, method);
    apiGroup = parts[0] ?? '';
    parts = parts.slice(1);
  }
  const apiVersion = parts[0] ?? '';
  parts = parts.slice(1);

  let verb: string;
  const head = parts[0] ?? '';
  if (head === 'watch' || head === 'proxy') {
    // kube answers 'unable to determine kind and namespace'; without a resource it is not one.
    if (parts.length < 2) return nonResource(path, method);
    verb = head;
    parts = parts.slice(1);
  } else {
    verb = verbOfMethod(method);
  }

  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] ?? '';
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] ?? '')) parts = parts.slice(2);
  }

  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = verb !== 'proxy' && parts.length >= 3 ? (parts[2] ?? '') : '';

  if (name === '' && verb === 'get') {
    const watch = first(query['watch']);
    verb = watch !== undefined && watch !== '0' && watch.toLowerCase() !== 'false' ? 'watch' : 'list';
    const selector = first(query['fieldSelector']);
    if (selector !== undefined) {
      const pinned = exactNameFromFieldSelector(selector);
      if (pinned !== undefined && isValidPathSegmentName(pinned)) name = pinned;
    }
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';

  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
    parts,
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What the request is about; set by the first onRequest hook (see
     * `src/server/pipeline.ts`), so it is defined in every later hook and handler.
     */
    requestInfo: RequestInfo;
    /**
     * Audit annotations admission plugins add while the request is served (the resource routes
     * create it; audit reads it when the request ends); null until then.
     */
    auditAnnotations: Record<string, string> | null;
  }
}
