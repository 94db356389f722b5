/**
 * The served OpenAPI documents, built on first request and cached as bytes: the v2 document (JSON
 * and protobuf), the per-group-version v3 documents and the `/openapi/v3` root that points at them
 * by hash. Nothing is built at construction, so the documents never slow server start; the first
 * client that asks pays the build once (see {@link OpenApiDocuments.stats}).
 *
 * ETags are kube's: the upper-case hex SHA-512 of the JSON bytes; the protobuf form of v2 shares
 * the JSON form's ETag, as in kube-apiserver (responses vary by Accept). The v3 root lists each
 * group version as `/openapi/v3/<path>?hash=<etag>`, which clients cache as immutable.
 */
import { createHash } from 'node:crypto';
import type { SchemaSet } from '../registry/schema.js';
import type { Registry } from '../registry/types.js';
import { DefinitionBuilder } from './definitions.js';
import { loadDescriptions, type Descriptions } from './descriptions.js';
import type { JsonObject } from './types.js';
import { buildV2Document, type DocumentInfo } from './v2.js';
import { encodeV2Protobuf, loadGnosticDocumentType } from './v2-protobuf.js';
import type protobuf from 'protobufjs';
import { buildV3Documents } from './v3.js';
import { buildCustomV3Documents, type CustomKinds } from './custom.js';
import { mergeCustomV2 } from './custom-v2.js';

/** One serialized document. */
export interface RenderedDocument {
  readonly body: Buffer;
  /** Unquoted entity tag (upper-case hex SHA-512 of the JSON form). */
  readonly etag: string;
  readonly lastModified: Date;
}

/** Build cost of the documents built so far (milliseconds and bytes), for logs and reports. */
export interface OpenApiBuildStats {
  /** Reading the description files (proto/descriptions), once, with the first document. */
  readonly descriptionsMs?: number;
  readonly v2JsonMs?: number;
  readonly v2JsonBytes?: number;
  readonly v2ProtobufMs?: number;
  readonly v2ProtobufBytes?: number;
  readonly v3Ms?: number;
  /** Total bytes of all group-version documents. */
  readonly v3Bytes?: number;
  readonly v3Documents?: number;
}

/** What the documents are built from. */
export interface OpenApiDocumentsOptions {
  /** `info` of the v2 document (kube: title `Kubernetes`, version the server's gitVersion). */
  readonly v2Info: DocumentInfo;
  /** The clock for Last-Modified (tests inject one). */
  readonly now?: () => Date;
  /** Custom resources to publish besides the registry's kinds (v2 and v3; rebuilt on change). */
  readonly custom?: CustomKinds;
  /**
   * Texts of the messages and fields; default: read from `proto/descriptions` when the first
   * document is built (tests inject their own or `Descriptions.none()`).
   */
  readonly descriptions?: Descriptions;
}

/** kube's entity tag: upper-case hex SHA-512. */
export function computeEtag(data: Uint8Array): string {
  return createHash('sha512').update(data).digest('hex').toUpperCase();
}

/** `/openapi/v3/<path>?hash=<etag>`, as the root and the hash redirect spell it. */
export function serverRelativeUrl(path: string, etag: string): string {
  return `/openapi/v3/${path}?hash=${encodeURIComponent(etag)}`;
}

function elapsedMs(start: bigint): number {
  return Number((process.hrtime.bigint() - start) / 1000n) / 1000;
}

/** The v2 document of one generation of custom kinds (see `OpenApiDocuments.#v2Custom`). */
interface CustomV2 {
  readonly generation: number;
  /** The merged tree (its own paths and definitions maps; every other node is shared). */
  readonly tree: JsonObject;
  readonly json: RenderedDocument;
  protobuf?: RenderedDocument;
}

/**
 * Lazily built, cached OpenAPI documents of one registry. The registry and schemas must not
 * change afterwards (the built-in kinds do not); custom resources come through
 * {@link OpenApiDocumentsOptions.custom}, whose documents are rebuilt when its generation changes.
 */
export class OpenApiDocuments {
  readonly #registry: Registry;
  readonly #schemas: SchemaSet;
  readonly #options: OpenApiDocumentsOptions;
  #defs: DefinitionBuilder | undefined;
  #v2Json: RenderedDocument | undefined;
  #v2Protobuf: RenderedDocument | undefined;
  /** The gnostic message type, loaded on the first protobuf request (kept: custom kinds re-encode). */
  #gnostic: protobuf.Type | undefined;
  /**
   * The built-in v2 document as a tree, parsed once from its bytes when custom kinds are first
   * merged into it (every later merge starts from it; nothing modifies it).
   */
  #v2Tree: JsonObject | undefined;
  /** The v2 document with the custom kinds of one generation merged in. */
  #v2Custom: CustomV2 | undefined;
  #v3: ReadonlyMap<string, RenderedDocument> | undefined;
  #v3Root: RenderedDocument | undefined;
  #custom: { generation: number; docs: ReadonlyMap<string, RenderedDocument> } | undefined;
  #customRoot: { generation: number; doc: RenderedDocument } | undefined;
  #stats: OpenApiBuildStats = {};

  constructor(registry: Registry, schemas: SchemaSet, options: OpenApiDocumentsOptions) {
    this.#registry = registry;
    this.#schemas = schemas;
    this.#options = options;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  #definitions(): DefinitionBuilder {
    if (this.#defs === undefined) {
      let descriptions = this.#options.descriptions;
      if (descriptions === undefined) {
        const start = process.hrtime.bigint();
        descriptions = loadDescriptions();
        this.#stats = { ...this.#stats, descriptionsMs: elapsedMs(start) };
      }
      this.#defs = new DefinitionBuilder(this.#schemas, this.#registry, descriptions);
    }
    return this.#defs;
  }

  #render(doc: JsonObject): RenderedDocument {
    const body = Buffer.from(JSON.stringify(doc));
    return { body, etag: computeEtag(body), lastModified: this.#now() };
  }

  /** The built-in kinds' v2 document as JSON. */
  #builtInV2Json(): RenderedDocument {
    if (this.#v2Json === undefined) {
      const start = process.hrtime.bigint();
      this.#v2Json = this.#render(buildV2Document(this.#registry, this.#definitions(), this.#options.v2Info));
      this.#stats = { ...this.#stats, v2JsonMs: elapsedMs(start), v2JsonBytes: this.#v2Json.body.length };
    }
    return this.#v2Json;
  }

  /**
   * The v2 document with the current custom kinds, or undefined when there are none. Rebuilt
   * once per change of their generation, from the built-in tree (parsed from the built-in
   * document's bytes on the first merge only).
   */
  #customV2(): CustomV2 | undefined {
    const custom = this.#options.custom;
    if (custom === undefined) return undefined;
    const kinds = custom.kinds();
    if (kinds.length === 0) return undefined;
    if (this.#v2Custom?.generation !== custom.generation) {
      this.#v2Tree ??= JSON.parse(this.#builtInV2Json().body.toString('utf8')) as JsonObject;
      const tree = mergeCustomV2(this.#v2Tree, kinds, this.#definitions());
      this.#v2Custom = { generation: custom.generation, tree, json: this.#render(tree) };
    }
    return this.#v2Custom;
  }

  /**
   * The v2 document as JSON.
   * @throws SchemaError when a served kind reaches a message missing from the schemas.
   */
  v2Json(): RenderedDocument {
    return this.#customV2()?.json ?? this.#builtInV2Json();
  }

  /** The protobuf form of `json`, encoded from `tree` (its tree) or else from its bytes. */
  #encodeProtobuf(json: RenderedDocument, tree?: JsonObject): RenderedDocument {
    const start = process.hrtime.bigint();
    this.#gnostic ??= loadGnosticDocumentType();
    const doc = tree ?? (JSON.parse(json.body.toString('utf8')) as JsonObject);
    const body = Buffer.from(encodeV2Protobuf(doc, this.#gnostic));
    this.#stats = { ...this.#stats, v2ProtobufMs: elapsedMs(start), v2ProtobufBytes: body.length };
    return { body, etag: json.etag, lastModified: json.lastModified };
  }

  /**
   * The v2 document as gnostic protobuf, with the JSON form's ETag: encoded once per document,
   * from the merged tree with custom kinds, else from the built-in tree or (no custom kinds ever
   * merged) a parse of the cached JSON rather than a tree kept for a request that may never come.
   * @throws OpenApiEncodeError / SchemaError as the builders do.
   */
  v2Protobuf(): RenderedDocument {
    const custom = this.#customV2();
    if (custom !== undefined) {
      custom.protobuf ??= this.#encodeProtobuf(custom.json, custom.tree);
      return custom.protobuf;
    }
    this.#v2Protobuf ??= this.#encodeProtobuf(this.#builtInV2Json(), this.#v2Tree);
    return this.#v2Protobuf;
  }

  #v3Documents(): ReadonlyMap<string, RenderedDocument> {
    if (this.#v3 === undefined) {
      const start = process.hrtime.bigint();
      const out = new Map<string, RenderedDocument>();
      for (const [path, doc] of buildV3Documents(this.#registry, this.#definitions()))
        out.set(path, this.#render(doc));
      this.#v3 = out;
      let bytes = 0;
      for (const d of out.values()) bytes += d.body.length;
      this.#stats = { ...this.#stats, v3Ms: elapsedMs(start), v3Bytes: bytes, v3Documents: out.size };
    }
    return this.#v3;
  }

  /** The custom resources' v3 documents of the current generation (built-in ones win a clash). */
  #customDocuments(): ReadonlyMap<string, RenderedDocument> {
    const custom = this.#options.custom;
    if (custom === undefined) return new Map();
    if (this.#custom?.generation !== custom.generation) {
      const docs = new Map<string, RenderedDocument>();
      for (const [path, doc] of buildCustomV3Documents(custom.kinds(), this.#definitions()))
        docs.set(path, this.#render(doc));
      this.#custom = { generation: custom.generation, docs };
    }
    return this.#custom.docs;
  }

  /** The `/openapi/v3` root: `{"paths": {"apis/apps/v1": {"serverRelativeURL": ...}}}`. */
  v3Root(): RenderedDocument {
    const custom = this.#customDocuments();
    if (custom.size > 0) {
      const generation = this.#options.custom?.generation ?? 0;
      if (this.#customRoot?.generation !== generation) {
        const all = new Map([...custom, ...this.#v3Documents()]);
        const paths: JsonObject = {};
        for (const path of [...all.keys()].sort()) {
          const doc = all.get(path);
          if (doc !== undefined) paths[path] = { serverRelativeURL: serverRelativeUrl(path, doc.etag) };
        }
        this.#customRoot = { generation, doc: this.#render({ paths }) };
      }
      return this.#customRoot.doc;
    }
    if (this.#v3Root === undefined) {
      const paths: JsonObject = {};
      for (const [path, doc] of this.#v3Documents())
        paths[path] = { serverRelativeURL: serverRelativeUrl(path, doc.etag) };
      this.#v3Root = this.#render({ paths });
    }
    return this.#v3Root;
  }

  /** The v3 document of a root key (`api/v1`, `apis/apps/v1`), or undefined when not served. */
  v3(path: string): RenderedDocument | undefined {
    return this.#v3Documents().get(path) ?? this.#customDocuments().get(path);
  }

  /** Build times and sizes of what has been built so far. */
  stats(): OpenApiBuildStats {
    return this.#stats;
  }
}
