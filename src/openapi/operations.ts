/**
 * The REST operations of a served resource type, as a flavour-neutral model that the v2 and v3
 * renderers turn into `paths`. Paths, operation ids, `x-kubernetes-action` values and the GVK
 * extension follow kube-apiserver's documents: clients find a kind's operations by the GVK on
 * the operation (kubectl explain, apply's patch-type lookup, field-validation detection).
 *
 * Only what Capstan implements is advertised: the verbs of the type, the subresources it serves,
 * the patch types the server accepts (JSON, merge, strategic merge and apply), and the query
 * parameters the handlers read, among them the modifying ones (`dryRun`, `fieldManager`,
 * `fieldValidation` on writes, `force` on PATCH, `dryRun` on deletes). kubectl reads a
 * `fieldValidation` parameter on PATCH as "the server validates fields" and then leaves
 * validation to the server; `kubectl diff` and `--dry-run=server` look for `dryRun`.
 */
import {
  endpointSubresources,
  type EndpointSubresource,
  type ResourceType,
  type Subresource,
} from '../registry/types.js';
import {
  API_GROUP_LIST_MESSAGE,
  API_GROUP_MESSAGE,
  API_RESOURCE_LIST_MESSAGE,
  API_VERSIONS_MESSAGE,
  BINDING_MESSAGE,
  EVICTION_MESSAGE,
  META_TYPES,
  TOKEN_REQUEST_MESSAGE,
} from './definitions.js';
import { capitalize, groupStem, groupVersionPrefix, operationStem, operationTag, type Gvk } from './names.js';

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** A query parameter (kube describes them all as `uniqueItems` scalars). */
export interface ParamSpec {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean';
}

/** One response: HTTP code, kube's description, and the message type of the body if any. */
export interface ResponseSpec {
  readonly code: string;
  readonly description: string;
  readonly type?: string;
}

/** One operation of a path. */
export interface OperationSpec {
  readonly method: HttpMethod;
  /**
   * `x-kubernetes-action`: get, list, post, put, patch, delete, deletecollection, watch,
   * watchlist; absent, with {@link gvk}, on an operation that acts on no kind (discovery).
   */
  readonly action?: string;
  readonly operationId: string;
  readonly description: string;
  readonly tag: string;
  readonly gvk?: Gvk;
  readonly query: readonly ParamSpec[];
  /** The request body: its message type, media types, and whether it may be omitted. */
  readonly body?: {
    readonly type: string;
    readonly mediaTypes: readonly string[];
    readonly required: boolean;
  };
  readonly responses: readonly ResponseSpec[];
  /** Media types of the response bodies. */
  readonly produces: readonly string[];
  /** What an operation without a body says it consumes (v2's `consumes`; default `*\/*`). */
  readonly consumes?: readonly string[];
}

/** One path with its path parameters (`{namespace}`, `{name}`) and operations. */
export interface PathSpec {
  readonly path: string;
  readonly pathParams: readonly { readonly name: string; readonly description: string }[];
  readonly operations: readonly OperationSpec[];
}

/** Patch media types the server accepts, in kube's order. */
export const PATCH_MEDIA_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** Query parameters of create and replace (kube's CreateOptions/UpdateOptions). */
const WRITE_QUERY: readonly ParamSpec[] = [
  { name: 'dryRun', type: 'string' },
  { name: 'fieldManager', type: 'string' },
  { name: 'fieldValidation', type: 'string' },
];
/** Query parameters of patch (kube's PatchOptions). */
const PATCH_QUERY: readonly ParamSpec[] = [...WRITE_QUERY, { name: 'force', type: 'boolean' }];

const ANY_BODY: readonly string[] = ['*/*'];
/** What a built-in kind's object answers come in, in kube's order (its serializers'). */
const OBJECT_MEDIA_TYPES: readonly string[] = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
];
/** A list or watch answer's media types: an object's, then the watch streams'. */
const LIST_MEDIA_TYPES: readonly string[] = [
  ...OBJECT_MEDIA_TYPES,
  'application/json;stream=watch',
  'application/vnd.kubernetes.protobuf;stream=watch',
];

const LIST_QUERY: readonly ParamSpec[] = [
  { name: 'allowWatchBookmarks', type: 'boolean' },
  { name: 'continue', type: 'string' },
  { name: 'fieldSelector', type: 'string' },
  { name: 'labelSelector', type: 'string' },
  { name: 'limit', type: 'integer' },
  { name: 'resourceVersion', type: 'string' },
  { name: 'resourceVersionMatch', type: 'string' },
  { name: 'timeoutSeconds', type: 'integer' },
  { name: 'watch', type: 'boolean' },
];
const DELETE_QUERY: readonly ParamSpec[] = [
  { name: 'dryRun', type: 'string' },
  { name: 'gracePeriodSeconds', type: 'integer' },
  { name: 'orphanDependents', type: 'boolean' },
  { name: 'propagationPolicy', type: 'string' },
];
const DELETE_COLLECTION_QUERY: readonly ParamSpec[] = [
  ...LIST_QUERY.filter((p) => p.name !== 'allowWatchBookmarks' && p.name !== 'watch'),
  ...DELETE_QUERY,
].sort((a, b) => (a.name < b.name ? -1 : 1));

const UNAUTHORIZED: ResponseSpec = { code: '401', description: 'Unauthorized' };

function ok(type: string): ResponseSpec {
  return { code: '200', description: 'OK', type };
}

const NS_PARAM = {
  name: 'namespace',
  description: 'object name and auth scope, such as for teams and projects',
};

function nameParam(kind: string): { name: string; description: string } {
  return { name: 'name', description: `name of the ${kind}` };
}

/** Collects operations per path, in insertion order; paths without operations are dropped. */
class PathCollector {
  readonly #paths = new Map<string, { params: PathSpec['pathParams']; ops: OperationSpec[] }>();

  add(path: string, params: PathSpec['pathParams'], op: OperationSpec): void {
    let entry = this.#paths.get(path);
    if (entry === undefined) {
      entry = { params, ops: [] };
      this.#paths.set(path, entry);
    }
    entry.ops.push(op);
  }

  paths(): PathSpec[] {
    return [...this.#paths].map(([path, e]) => ({ path, pathParams: e.params, operations: e.ops }));
  }
}

/**
 * A discovery path: one GET with no parameters that answers `message`, in any of the object
 * media types, which it also says it consumes (as kube's discovery does).
 */
function discoveryGet(
  path: string,
  o: { operationId: string; description: string; tag: string; message: string },
): PathSpec {
  return {
    path,
    pathParams: [],
    operations: [
      {
        method: 'get',
        operationId: o.operationId,
        description: o.description,
        tag: o.tag,
        query: [],
        responses: [ok(o.message), UNAUTHORIZED],
        produces: OBJECT_MEDIA_TYPES,
        consumes: OBJECT_MEDIA_TYPES,
      },
    ],
  };
}

/**
 * The discovery path of a group version (`/apis/apps/v1/`, `/api/v1/`): kube's
 * `get<Group><Version>APIResources`, answering the group version's APIResourceList.
 */
export function discoveryPath(group: string, version: string): PathSpec {
  return discoveryGet(`${groupVersionPrefix(group, version)}/`, {
    operationId: `get${operationStem(group, version)}APIResources`,
    description: 'get available resources',
    tag: operationTag(group, version),
    message: API_RESOURCE_LIST_MESSAGE,
  });
}

/**
 * The root discovery paths: `/api/` (kube's `getCoreAPIVersions`, the legacy group's
 * APIVersions) and `/apis/` (`getAPIVersions`, the APIGroupList of every named group).
 */
export function rootDiscoveryPaths(): PathSpec[] {
  const description = 'get available API versions';
  return [
    discoveryGet('/api/', {
      operationId: 'getCoreAPIVersions',
      description,
      tag: 'core',
      message: API_VERSIONS_MESSAGE,
    }),
    discoveryGet('/apis/', {
      operationId: 'getAPIVersions',
      description,
      tag: 'apis',
      message: API_GROUP_LIST_MESSAGE,
    }),
  ];
}

/**
 * The discovery path of a named group (`/apis/apps/`): kube's `get<Group>APIGroup`, answering
 * the group's APIGroup.
 */
export function groupDiscoveryPath(group: string): PathSpec {
  const stem = groupStem(group);
  return discoveryGet(`/apis/${group}/`, {
    operationId: `get${capitalize(stem)}APIGroup`,
    description: 'get information of a group',
    tag: stem,
    message: API_GROUP_MESSAGE,
  });
}

/**
 * The paths and operations of one served type (collection, item, all-namespaces list, the
 * deprecated `/watch/` paths, and the `status` and `scale` subresources it serves).
 */
export function resourcePaths(t: ResourceType): PathSpec[] {
  const out = new PathCollector();
  const prefix = groupVersionPrefix(t.group, t.version);
  const stem = operationStem(t.group, t.version);
  const tag = operationTag(t.group, t.version);
  const gvk: Gvk = { group: t.group, version: t.version, kind: t.kind };
  const scope = t.namespaced ? 'Namespaced' : '';
  const has = (verb: string): boolean => t.verbs.includes(verb);
  const nsParams = t.namespaced ? [NS_PARAM] : [];
  const itemParams = [nameParam(t.kind), ...nsParams];
  const nsPath = t.namespaced ? '/namespaces/{namespace}' : '';
  const collection = `${prefix}${nsPath}/${t.plural}`;
  const item = `${collection}/{name}`;
  const listType = `${t.messageType}List`;
  const op = (o: Omit<OperationSpec, 'tag' | 'gvk'> & { gvk?: Gvk }): OperationSpec => ({ tag, gvk, ...o });

  if (has('list')) {
    out.add(
      collection,
      nsParams,
      op({
        method: 'get',
        action: 'list',
        operationId: `list${stem}${scope}${t.kind}`,
        description: `list or watch objects of kind ${t.kind}`,
        query: LIST_QUERY,
        responses: [ok(listType), UNAUTHORIZED],
        produces: LIST_MEDIA_TYPES,
      }),
    );
  }
  if (has('create')) {
    out.add(
      collection,
      nsParams,
      op({
        method: 'post',
        action: 'post',
        operationId: `create${stem}${scope}${t.kind}`,
        description: `create a ${t.kind}`,
        query: WRITE_QUERY,
        body: { type: t.messageType, mediaTypes: ANY_BODY, required: true },
        responses: [
          ok(t.messageType),
          { code: '201', description: 'Created', type: t.messageType },
          { code: '202', description: 'Accepted', type: t.messageType },
          UNAUTHORIZED,
        ],
        produces: OBJECT_MEDIA_TYPES,
      }),
    );
  }
  if (has('deletecollection')) {
    out.add(
      collection,
      nsParams,
      op({
        method: 'delete',
        action: 'deletecollection',
        operationId: `delete${stem}Collection${scope}${t.kind}`,
        description: `delete collection of ${t.kind}`,
        query: DELETE_COLLECTION_QUERY,
        body: { type: META_TYPES.deleteOptions, mediaTypes: ANY_BODY, required: false },
        responses: [ok(META_TYPES.status), UNAUTHORIZED],
        produces: OBJECT_MEDIA_TYPES,
      }),
    );
  }
  if (has('get')) {
    out.add(
      item,
      itemParams,
      op({
        method: 'get',
        action: 'get',
        operationId: `read${stem}${scope}${t.kind}`,
        description: `read the specified ${t.kind}`,
        query: [],
        responses: [ok(t.messageType), UNAUTHORIZED],
        produces: OBJECT_MEDIA_TYPES,
      }),
    );
  }
  if (has('update'))
    out.add(
      item,
      itemParams,
      replaceOp(op, `replace${stem}${scope}${t.kind}`, `replace the specified ${t.kind}`, t.messageType),
    );
  if (has('patch'))
    out.add(
      item,
      itemParams,
      patchOp(op, `patch${stem}${scope}${t.kind}`, `partially update the specified ${t.kind}`, t.messageType),
    );
  if (has('delete')) {
    out.add(
      item,
      itemParams,
      op({
        method: 'delete',
        action: 'delete',
        operationId: `delete${stem}${scope}${t.kind}`,
        description: `delete a ${t.kind}`,
        query: DELETE_QUERY,
        body: { type: META_TYPES.deleteOptions, mediaTypes: ANY_BODY, required: false },
        responses: [
          ok(META_TYPES.status),
          { code: '202', description: 'Accepted', type: META_TYPES.status },
          UNAUTHORIZED,
        ],
        produces: OBJECT_MEDIA_TYPES,
      }),
    );
  }
  if (t.namespaced && has('list')) {
    out.add(
      `${prefix}/${t.plural}`,
      [],
      op({
        method: 'get',
        action: 'list',
        operationId: `list${stem}${t.kind}ForAllNamespaces`,
        description: `list or watch objects of kind ${t.kind}`,
        query: LIST_QUERY,
        responses: [ok(listType), UNAUTHORIZED],
        produces: LIST_MEDIA_TYPES,
      }),
    );
  }
  if (has('watch')) addWatchPaths(out, t, op, { prefix, stem, nsPath, nsParams, itemParams });
  for (const sub of [...t.subresources, ...endpointSubresources(t)])
    addSubresource(out, t, op, sub, { item, stem, scope, itemParams });
  return out.paths();
}

type OpFactory = (o: Omit<OperationSpec, 'tag' | 'gvk'> & { gvk?: Gvk }) => OperationSpec;

function replaceOp(
  op: OpFactory,
  operationId: string,
  description: string,
  type: string,
  gvk?: Gvk,
): OperationSpec {
  return op({
    method: 'put',
    action: 'put',
    operationId,
    description,
    query: WRITE_QUERY,
    body: { type, mediaTypes: ANY_BODY, required: true },
    responses: [ok(type), { code: '201', description: 'Created', type }, UNAUTHORIZED],
    produces: OBJECT_MEDIA_TYPES,
    ...(gvk === undefined ? {} : { gvk }),
  });
}

function patchOp(
  op: OpFactory,
  operationId: string,
  description: string,
  type: string,
  gvk?: Gvk,
): OperationSpec {
  return op({
    method: 'patch',
    action: 'patch',
    operationId,
    description,
    query: PATCH_QUERY,
    body: { type: META_TYPES.patch, mediaTypes: PATCH_MEDIA_TYPES, required: true },
    responses: [ok(type), { code: '201', description: 'Created', type }, UNAUTHORIZED],
    produces: OBJECT_MEDIA_TYPES,
    ...(gvk === undefined ? {} : { gvk }),
  });
}

function addWatchPaths(
  out: PathCollector,
  t: ResourceType,
  op: OpFactory,
  c: {
    prefix: string;
    stem: string;
    nsPath: string;
    nsParams: PathSpec['pathParams'];
    itemParams: PathSpec['pathParams'];
  },
): void {
  const scope = t.namespaced ? 'Namespaced' : '';
  const watch = (operationId: string, action: string, description: string): OperationSpec =>
    op({
      method: 'get',
      action,
      operationId,
      description,
      query: LIST_QUERY,
      responses: [ok(META_TYPES.watchEvent), UNAUTHORIZED],
      produces: LIST_MEDIA_TYPES,
    });
  const base = `${c.prefix}/watch${c.nsPath}/${t.plural}`;
  out.add(
    base,
    c.nsParams,
    watch(
      `watch${c.stem}${scope}${t.kind}List`,
      'watchlist',
      `watch individual changes to a list of ${t.kind}`,
    ),
  );
  out.add(
    `${base}/{name}`,
    c.itemParams,
    watch(`watch${c.stem}${scope}${t.kind}`, 'watch', `watch changes to an object of kind ${t.kind}`),
  );
  if (t.namespaced) {
    out.add(
      `${c.prefix}/watch/${t.plural}`,
      [],
      watch(
        `watch${c.stem}${t.kind}ListForAllNamespaces`,
        'watchlist',
        `watch individual changes to a list of ${t.kind}`,
      ),
    );
  }
}

/** The body and kind of a subresource created by POST. */
interface PostedSubresource {
  readonly message: string;
  readonly gvk: Gvk;
}

/** The subresources read and written with get, put and patch. */
const READ_WRITE: ReadonlySet<string> = new Set([
  'status',
  'approval',
  'scale',
  'ephemeralcontainers',
  'resize',
]);

const POSTED: Readonly<Record<'token' | 'eviction' | 'binding', PostedSubresource>> = {
  token: {
    message: TOKEN_REQUEST_MESSAGE,
    gvk: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
  },
  eviction: {
    message: EVICTION_MESSAGE,
    gvk: { group: 'policy', version: 'v1', kind: 'Eviction' },
  },
  binding: {
    message: BINDING_MESSAGE,
    gvk: { group: '', version: 'v1', kind: 'Binding' },
  },
};

function addSubresource(
  out: PathCollector,
  t: ResourceType,
  op: OpFactory,
  sub: Subresource | EndpointSubresource,
  c: { item: string; stem: string; scope: string; itemParams: PathSpec['pathParams'] },
): void {
  const path = `${c.item}/${sub}`;
  if (sub === 'token' || sub === 'eviction' || sub === 'binding') {
    const { message, gvk } = POSTED[sub];
    out.add(
      path,
      [{ name: 'name', description: `name of the ${gvk.kind}` }, ...c.itemParams.slice(1)],
      op({
        method: 'post',
        action: 'post',
        operationId: `create${c.stem}${c.scope}${t.kind}${capitalize(sub)}`,
        description: `create ${sub} of a ${t.kind}`,
        query: WRITE_QUERY,
        body: { type: message, mediaTypes: ANY_BODY, required: true },
        responses: [
          ok(message),
          { code: '201', description: 'Created', type: message },
          { code: '202', description: 'Accepted', type: message },
          UNAUTHORIZED,
        ],
        produces: OBJECT_MEDIA_TYPES,
        gvk,
      }),
    );
    return;
  }
  if (sub === 'finalize') {
    const id = `replace${c.stem}${c.scope}${t.kind}Finalize`;
    out.add(
      path,
      c.itemParams,
      replaceOp(op, id, `replace finalize of the specified ${t.kind}`, t.messageType),
    );
    return;
  }
  // log and the connect subresources (exec, attach, portforward, proxy) have no operations here
  // yet (kube lists them as connect operations with their options as query parameters).
  if (!READ_WRITE.has(sub)) return;
  const suffix = capitalize(sub);
  const type = sub === 'scale' ? META_TYPES.scale : t.messageType;
  const gvk: Gvk | undefined =
    sub === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : undefined;
  const params = [
    { name: 'name', description: `name of the ${sub === 'scale' ? 'Scale' : t.kind}` },
    ...c.itemParams.slice(1),
  ];
  const id = `${c.stem}${c.scope}${t.kind}${suffix}`;
  out.add(
    path,
    params,
    op({
      method: 'get',
      action: 'get',
      operationId: `read${id}`,
      description: `read ${sub} of the specified ${t.kind}`,
      query: [],
      responses: [ok(type), UNAUTHORIZED],
      produces: OBJECT_MEDIA_TYPES,
      ...(gvk === undefined ? {} : { gvk }),
    }),
  );
  out.add(
    path,
    params,
    replaceOp(op, `replace${id}`, `replace ${sub} of the specified ${t.kind}`, type, gvk),
  );
  out.add(
    path,
    params,
    patchOp(op, `patch${id}`, `partially update ${sub} of the specified ${t.kind}`, type, gvk),
  );
}
