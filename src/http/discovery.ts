/**
 * Discovery: the documents clients read to learn which groups, versions and resources the server
 * has, in kube-apiserver's shapes.
 *
 * - `/api` (APIVersions) and `/apis` (APIGroupList), or, when the Accept header asks for it, the
 *   aggregated `APIGroupDiscoveryList` of `apidiscovery.k8s.io` v2 or v2beta1 (kubectl and
 *   client-go 1.26+ ask for v2, then v2beta1, then plain JSON, and read the Content-Type to
 *   learn which one they got);
 * - `/apis/{group}` (APIGroup), `/api/v1` and `/apis/{group}/{version}` (APIResourceList, with
 *   `<plural>/status` and `<plural>/scale` entries).
 *
 * Every body is rendered once per registry generation (`/api` at its first request, which names
 * the server address) and served with an ETag; `If-None-Match` gets 304, as kubectl's HTTP cache expects.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endLine } from './json-newline.js';
import { notAcceptable } from '../api/errors.js';
import type { ServedRegistry } from '../registry/layered.js';
import { endpointSubresources, type ResourceType } from '../registry/types.js';
import { formatApiVersion } from '../api/group-version.js';

const JSON_TYPE = 'application/json';
const AGGREGATED_KIND = 'APIGroupDiscoveryList';
const AGGREGATED_GROUP = 'apidiscovery.k8s.io';
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

/** The kind of the `serviceaccounts/token` subresource (kube lists it so). */
const TOKEN_REQUEST = { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } as const;
/** What pods/eviction takes (src/server/eviction.ts). */
const EVICTION = { group: 'policy', version: 'v1', kind: 'Eviction' } as const;

/** The options kinds of the connect subresources of pods (kube lists them so). */
const CONNECT_OPTIONS: Readonly<Record<string, string>> = {
  exec: 'PodExecOptions',
  attach: 'PodAttachOptions',
  portforward: 'PodPortForwardOptions',
};

/** The verbs of the `proxy` subresources (served by `src/server/proxy-subresources.ts`). */
const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'] as const;

/** Custom resources (no protobuf form): kube's CRD discovery differs in small ways, noted where used. */
function isCustom(t: ResourceType): boolean {
  return t.messageType === '';
}

/** The subresources discovery lists for `t`: kube sorts a built-in type's, not a custom resource's. */
function listedSubresources(t: ResourceType): string[] {
  if (isCustom(t)) return [...t.subresources];
  return [...t.subresources, ...endpointSubresources(t)].sort();
}

/** What discovery says of a subresource of `t`: the kind it takes or answers, and its verbs. */
function subresourceShape(
  t: ResourceType,
  sub: string,
): { kind: { group: string; version: string; kind: string }; verbs: readonly string[] } {
  if (sub === 'token') return { kind: TOKEN_REQUEST, verbs: ['create'] };
  if (sub === 'binding')
    return { kind: { group: t.group, version: t.version, kind: 'Binding' }, verbs: ['create'] };
  if (sub === 'finalize')
    return { kind: { group: t.group, version: t.version, kind: t.kind }, verbs: ['update'] };
  if (sub === 'eviction') return { kind: EVICTION, verbs: ['create'] };
  if (sub === 'scale')
    return { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: SUBRESOURCE_VERBS };
  const own = { group: t.group, version: t.version };
  if (sub === 'log') return { kind: { ...own, kind: t.kind }, verbs: ['get'] };
  const options = CONNECT_OPTIONS[sub];
  if (options !== undefined) return { kind: { ...own, kind: options }, verbs: ['create', 'get'] };
  if (sub === 'proxy') {
    return { kind: { ...own, kind: `${t.kind}ProxyOptions` }, verbs: PROXY_VERBS };
  }
  return { kind: { ...own, kind: t.kind }, verbs: SUBRESOURCE_VERBS };
}

/** Which representation a discovery request gets. */
export type DiscoveryFormat = 'v2' | 'v2beta1' | 'legacy';

interface MediaRange {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

function parseAccept(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [rawType = '', ...rawParams] = part.split(';');
    const type = rawType.trim().toLowerCase();
    if (type === '') continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq === -1) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') q = Number.parseFloat(value);
      else params.set(key, value);
    }
    if (Number.isFinite(q) && q > 0) out.push({ type, params, q });
  }
  // Stable sort: among equal q the client's order decides (client-go lists no q values).
  return out.sort((a, b) => b.q - a.q);
}

/**
 * The format an Accept header selects on `/api` and `/apis`, or undefined when it accepts none
 * of them (406). A missing header means plain JSON.
 */
export function negotiateDiscovery(
  accept: string | undefined,
  aggregated: boolean,
): DiscoveryFormat | undefined {
  if (accept === undefined || accept.trim() === '') return 'legacy';
  for (const range of parseAccept(accept)) {
    const g = range.params.get('g');
    const as = range.params.get('as');
    if (range.type === JSON_TYPE && g !== undefined) {
      if (!aggregated || g !== AGGREGATED_GROUP || as !== AGGREGATED_KIND) continue;
      const v = range.params.get('v');
      if (v === 'v2' || v === 'v2beta1') return v;
      continue;
    }
    if (range.type === JSON_TYPE || range.type === 'application/*' || range.type === '*/*') return 'legacy';
  }
  return undefined;
}

/** A rendered body with its content type and ETag. */
interface Rendered {
  /** Bytes, so fastify sends them (and the content type) untouched. */
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

function render(doc: unknown, contentType: string): Rendered {
  const body = Buffer.from(endLine(JSON.stringify(doc)), 'utf8');
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
  return { body, contentType, etag };
}

function resourceEntries(types: readonly ResourceType[]): object[] {
  const entries: { name: string; entry: object }[] = [];
  for (const t of types) {
    entries.push({
      name: t.plural,
      entry: {
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: t.verbs,
        ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
        ...(t.categories.length > 0 ? { categories: t.categories } : {}),
        ...(t.storageVersionHash === undefined ? {} : { storageVersionHash: t.storageVersionHash }),
      },
    });
    for (const sub of listedSubresources(t)) {
      const name = `${t.plural}/${sub}`;
      const shape = subresourceShape(t, sub);
      const foreign = shape.kind.group !== t.group || shape.kind.version !== t.version;
      entries.push({
        name,
        entry: {
          name,
          singularName: '',
          namespaced: t.namespaced,
          ...(foreign ? shape.kind : { kind: shape.kind.kind }),
          verbs: shape.verbs,
        },
      });
    }
  }
  // kube sorts a built-in group version's list by name; a custom resource's entries keep their order.
  if (!types.every(isCustom)) entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries.map((e) => e.entry);
}

function aggregatedResource(t: ResourceType): object {
  // kube derives a built-in type's response kinds from its legacy list, where a kind of the
  // type's own group version has no group and version; a custom resource's carry them.
  const kindOf = (kind: { group: string; version: string; kind: string }): object =>
    !isCustom(t) && kind.group === t.group && kind.version === t.version
      ? { group: '', version: '', kind: kind.kind }
      : kind;
  const subresources = listedSubresources(t).map((sub) => {
    const shape = subresourceShape(t, sub);
    return { subresource: sub, responseKind: kindOf(shape.kind), verbs: shape.verbs };
  });
  return {
    resource: t.plural,
    responseKind: kindOf({ group: t.group, version: t.version, kind: t.kind }),
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singular,
    verbs: t.verbs,
    ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
    ...(t.categories.length > 0 ? { categories: t.categories } : {}),
    ...(subresources.length > 0 ? { subresources } : {}),
  };
}

/** A group served by other servers (remote APIServices), for discovery. */
export interface RemoteGroup {
  readonly name: string;
  /** Preferred first. */
  readonly versions: readonly {
    readonly version: string;
    /** The `resources` of the version's APIResourceList; undefined when not known (unavailable). */
    readonly resources: readonly Record<string, unknown>[] | undefined;
  }[];
}

/** The groups of remote APIServices (the aggregator's part of discovery). */
export interface RemoteDiscovery {
  /** Changes whenever `groups()` does. */
  readonly generation: number;
  /** In discovery order, after the server's own groups. */
  groups(): readonly RemoteGroup[];
}

/**
 * A resource of an APIResourceList as an aggregated (v2) discovery resource, with its
 * subresources, converted as kube's aggregator converts a remote server's list: a response kind
 * carries the list entry's own group and version, empty when they are the list's.
 */
function aggregatedFromList(list: readonly Record<string, unknown>[]): object[] {
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const out: object[] = [];
  for (const r of list) {
    const name = str(r['name']);
    if (name === '' || name.includes('/')) continue;
    const subresources = list
      .filter((s) => str(s['name']).startsWith(`${name}/`))
      .map((s) => ({
        subresource: str(s['name']).slice(name.length + 1),
        responseKind: { group: str(s['group']), version: str(s['version']), kind: str(s['kind']) },
        verbs: Array.isArray(s['verbs']) ? s['verbs'] : [],
      }));
    out.push({
      resource: name,
      responseKind: { group: str(r['group']), version: str(r['version']), kind: str(r['kind']) },
      scope: r['namespaced'] === true ? 'Namespaced' : 'Cluster',
      singularResource: str(r['singularName']),
      verbs: Array.isArray(r['verbs']) ? r['verbs'] : [],
      ...(Array.isArray(r['shortNames']) && r['shortNames'].length > 0
        ? { shortNames: r['shortNames'] }
        : {}),
      ...(Array.isArray(r['categories']) && r['categories'].length > 0
        ? { categories: r['categories'] }
        : {}),
      ...(subresources.length > 0 ? { subresources } : {}),
    });
  }
  return out;
}

/** The fixed documents for one registry. */
class DiscoveryDocuments {
  readonly apis: Rendered;
  readonly apisAggregated: Readonly<Record<'v2' | 'v2beta1', Rendered>>;
  readonly apiAggregated: Readonly<Record<'v2' | 'v2beta1', Rendered>>;
  readonly groups = new Map<string, Rendered>();
  readonly resourceLists = new Map<string, Rendered>();
  readonly #registry: ServedRegistry;
  readonly #serverAddress: () => string;
  /** The registry generation these documents show. */
  readonly generation: number;
  /** The remote groups' generation these documents show. */
  readonly remoteGeneration: number;
  #api: Rendered | undefined;

  constructor(registry: ServedRegistry, serverAddress: () => string, remote: RemoteDiscovery | undefined) {
    this.#registry = registry;
    this.generation = registry.generation;
    this.remoteGeneration = remote?.generation ?? 0;
    this.#serverAddress = serverAddress;
    const local = registry.groups().filter((g) => g.name !== '');
    const localNames = new Set(local.map((g) => g.name));
    const remoteGroups = (remote?.groups() ?? []).filter(
      (g) => !localNames.has(g.name) && g.versions.length > 0,
    );
    const named = [
      ...local,
      ...remoteGroups.map((g) => ({
        name: g.name,
        versions: g.versions.map((v) => v.version),
        preferredVersion: g.versions[0]?.version ?? '',
      })),
    ];
    const apiGroup = (g: (typeof named)[number]): object => ({
      name: g.name,
      versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${g.name}/${g.preferredVersion}`, version: g.preferredVersion },
    });
    this.apis = render({ kind: 'APIGroupList', apiVersion: 'v1', groups: named.map(apiGroup) }, JSON_TYPE);
    for (const g of named) {
      this.groups.set(g.name, render({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) }, JSON_TYPE));
    }
    for (const g of registry.groups()) {
      for (const v of g.versions) {
        const gv = formatApiVersion(g.name, v);
        this.resourceLists.set(
          gv,
          render(
            {
              kind: 'APIResourceList',
              apiVersion: 'v1',
              groupVersion: gv,
              resources: resourceEntries(registry.resourcesOf(g.name, v)),
            },
            JSON_TYPE,
          ),
        );
      }
    }
    const remoteItems = remoteGroups
      .map((g) => ({
        metadata: { name: g.name, creationTimestamp: null },
        versions: g.versions
          .filter((v) => v.resources !== undefined)
          .map((v) => ({
            version: v.version,
            resources: aggregatedFromList(v.resources ?? []),
            freshness: 'Current',
          })),
      }))
      .filter((item) => item.versions.length > 0);
    const aggregated = (groups: typeof named, version: 'v2' | 'v2beta1', withRemote: boolean): Rendered =>
      render(
        {
          kind: AGGREGATED_KIND,
          apiVersion: `${AGGREGATED_GROUP}/${version}`,
          metadata: {},
          items: [
            ...groups.map((g) => ({
              metadata: { ...(g.name === '' ? {} : { name: g.name }), creationTimestamp: null },
              versions: g.versions.map((v) => ({
                version: v,
                resources: registry.resourcesOf(g.name, v).map(aggregatedResource),
                freshness: 'Current',
              })),
            })),
            ...(withRemote ? remoteItems : []),
          ],
        },
        `${JSON_TYPE};g=${AGGREGATED_GROUP};v=${version};as=${AGGREGATED_KIND}`,
      );
    const core = registry.groups().filter((g) => g.name === '');
    this.apisAggregated = { v2: aggregated(local, 'v2', true), v2beta1: aggregated(local, 'v2beta1', true) };
    this.apiAggregated = { v2: aggregated(core, 'v2', false), v2beta1: aggregated(core, 'v2beta1', false) };
  }

  /** `/api`, rendered on first use: the server address is known only once listening. */
  api(): Rendered {
    this.#api ??= render(
      {
        kind: 'APIVersions',
        versions: this.#registry.groups().find((g) => g.name === '')?.versions ?? [],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.#serverAddress() }],
      },
      JSON_TYPE,
    );
    return this.#api;
  }
}

function reply200(request: FastifyRequest, reply: FastifyReply, doc: Rendered): FastifyReply {
  void reply.header('etag', doc.etag).header('vary', 'Accept');
  if (request.headers['if-none-match'] === doc.etag) return reply.code(304).send();
  return reply.header('content-type', doc.contentType).send(doc.body);
}

function pick(request: FastifyRequest, aggregated: boolean): DiscoveryFormat {
  const format = negotiateDiscovery(request.headers.accept, aggregated);
  if (format === undefined) {
    throw notAcceptable(`only the following media types are accepted: ${JSON_TYPE}`);
  }
  return format;
}

/** What discovery needs to know besides the registry. */
export interface DiscoveryOptions {
  /** `host:port` clients should use, for `/api`'s serverAddressByClientCIDRs. */
  readonly serverAddress: () => string;
  /** The groups of remote APIServices (none: the server's own groups only). */
  readonly remote?: RemoteDiscovery;
}

/**
 * Registers the discovery routes for `registry` on `app`. The documents are rendered again on
 * the first request after the registry changed (custom resources came or went).
 */
export function installDiscoveryRoutes(
  app: FastifyInstance,
  registry: ServedRegistry,
  options: DiscoveryOptions,
): void {
  let current = new DiscoveryDocuments(registry, options.serverAddress, options.remote);
  const documents = (): DiscoveryDocuments => {
    if (
      current.generation !== registry.generation ||
      current.remoteGeneration !== (options.remote?.generation ?? 0)
    ) {
      current = new DiscoveryDocuments(registry, options.serverAddress, options.remote);
    }
    return current;
  };
  app.get('/api', (request, reply) => {
    const docs = documents();
    const format = pick(request, true);
    return reply200(request, reply, format === 'legacy' ? docs.api() : docs.apiAggregated[format]);
  });
  app.get('/apis', (request, reply) => {
    const docs = documents();
    const format = pick(request, true);
    return reply200(request, reply, format === 'legacy' ? docs.apis : docs.apisAggregated[format]);
  });
  // Three parameterized routes rather than one per group version: fewer routes, faster start.
  const serveFixed = (
    doc: Rendered | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): FastifyReply => {
    if (doc === undefined) {
      reply.callNotFound();
      return reply;
    }
    pick(request, false);
    return reply200(request, reply, doc);
  };
  app.get('/api/:version', (request, reply) => {
    const { version } = request.params as { version: string };
    return serveFixed(documents().resourceLists.get(version), request, reply);
  });
  app.get('/apis/:group/:version', (request, reply) => {
    const { group, version } = request.params as { group: string; version: string };
    return serveFixed(documents().resourceLists.get(`${group}/${version}`), request, reply);
  });
  app.get('/apis/:group', (request, reply) => {
    const { group } = request.params as { group: string };
    return serveFixed(documents().groups.get(group), request, reply);
  });
}
