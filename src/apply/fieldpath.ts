/**
 * Sets of field paths (SMD's `fieldpath.Set`): a trie whose nodes hold *members* (elements whose
 * path is in the set) and *children* (elements under which deeper paths are in the set). A path
 * can be both a member and a prefix of members: a list-map item `k:{"name":"c"}` is owned as an
 * item and its fields are owned too.
 *
 * Sets are immutable; operations share unchanged subtrees. Build them with
 * {@link FieldSetBuilder} or {@link FieldSet.fromPaths}. Nodes index elements by their canonical
 * id, so lookups are hash lookups; SMD's element order is applied only where order shows
 * (FieldsV1 output, {@link FieldSet.paths}).
 *
 * FieldsV1 (`managedFields[].fieldsV1`) encodes a set as nested objects keyed by element ids:
 * `{}` marks a member without children; a member that also has children lists `".": {}` first;
 * entries follow SMD's element order. {@link FieldSet.toFieldsV1} writes exactly what
 * kube-apiserver writes; {@link FieldSet.fromFieldsV1} reads what it reads.
 */
import { FieldsV1Error } from './errors.js';
import {
  comparePathElements,
  parsePathElement,
  pathToString,
  type Path,
  type PathElement,
} from './path-element.js';
import { isJsonMap, type JsonMap } from './value.js';

export * from './path-element.js';

interface Child {
  readonly pe: PathElement;
  readonly node: Node;
}

/** Invariant: no child node is empty (SMD never keeps nodes without members below them). */
interface Node {
  readonly members: Map<string, PathElement>;
  readonly children: Map<string, Child>;
}

function newNode(): Node {
  return { members: new Map(), children: new Map() };
}

const EMPTY_NODE: Node = newNode();

function isEmptyNode(n: Node): boolean {
  return n.members.size === 0 && n.children.size === 0;
}

function union(a: Node, b: Node): Node {
  if (isEmptyNode(a)) return b;
  if (isEmptyNode(b)) return a;
  const out = newNode();
  for (const [id, pe] of a.members) out.members.set(id, pe);
  for (const [id, pe] of b.members) out.members.set(id, pe);
  for (const [id, c] of a.children) {
    const other = b.children.get(id);
    out.children.set(id, other === undefined ? c : { pe: c.pe, node: union(c.node, other.node) });
  }
  for (const [id, c] of b.children) if (!a.children.has(id)) out.children.set(id, c);
  return out;
}

function intersection(a: Node, b: Node): Node {
  const out = newNode();
  for (const [id, pe] of a.members) if (b.members.has(id)) out.members.set(id, pe);
  for (const [id, c] of a.children) {
    const other = b.children.get(id);
    if (other === undefined) continue;
    const node = intersection(c.node, other.node);
    if (!isEmptyNode(node)) out.children.set(id, { pe: c.pe, node });
  }
  return out;
}

/** Path-wise difference: removing a member leaves paths below it (SMD's `Difference`). */
function difference(a: Node, b: Node): Node {
  if (isEmptyNode(b)) return a;
  const out = newNode();
  for (const [id, pe] of a.members) if (!b.members.has(id)) out.members.set(id, pe);
  for (const [id, c] of a.children) {
    const other = b.children.get(id);
    if (other === undefined) {
      out.children.set(id, c);
      continue;
    }
    const node = difference(c.node, other.node);
    if (!isEmptyNode(node)) out.children.set(id, { pe: c.pe, node });
  }
  return out;
}

/** Removes every path of `b` and everything below it (SMD's `RecursiveDifference`). */
function recursiveDifference(a: Node, b: Node): Node {
  if (isEmptyNode(b)) return a;
  const out = newNode();
  for (const [id, pe] of a.members) if (!b.members.has(id)) out.members.set(id, pe);
  for (const [id, c] of a.children) {
    if (b.members.has(id)) continue;
    const other = b.children.get(id);
    if (other === undefined) {
      out.children.set(id, c);
      continue;
    }
    const node = recursiveDifference(c.node, other.node);
    if (!isEmptyNode(node)) out.children.set(id, { pe: c.pe, node });
  }
  return out;
}

function leaves(a: Node): Node {
  const out = newNode();
  for (const [id, pe] of a.members) if (!a.children.has(id)) out.members.set(id, pe);
  for (const [id, c] of a.children) {
    const node = leaves(c.node);
    if (!isEmptyNode(node)) out.children.set(id, { pe: c.pe, node });
  }
  return out;
}

function nodeEquals(a: Node, b: Node): boolean {
  if (a === b) return true;
  if (a.members.size !== b.members.size || a.children.size !== b.children.size) return false;
  for (const id of a.members.keys()) if (!b.members.has(id)) return false;
  for (const [id, c] of a.children) {
    const other = b.children.get(id);
    if (other === undefined || !nodeEquals(c.node, other.node)) return false;
  }
  return true;
}

function countMembers(a: Node): number {
  let n = a.members.size;
  for (const c of a.children.values()) n += countMembers(c.node);
  return n;
}

const byElement = (x: PathElement, y: PathElement): number => comparePathElements(x, y);

/** One FieldsV1 entry per element of the node, in SMD's order, `"."` first when `self`. */
function emitFieldsV1(node: Node, self: boolean): JsonMap {
  const out: JsonMap = {};
  if (self && !isEmptyNode(node)) out['.'] = {};
  const elements: PathElement[] = [...node.members.values()];
  for (const [id, c] of node.children) if (!node.members.has(id)) elements.push(c.pe);
  elements.sort(byElement);
  for (const pe of elements) {
    const child = node.children.get(pe.id);
    out[pe.id] = child === undefined ? {} : emitFieldsV1(child.node, node.members.has(pe.id));
  }
  return out;
}

/** Reads one FieldsV1 object; `member` tells whether the parent element is itself owned. */
function readFieldsV1(json: unknown, where: string): { node: Node; member: boolean } {
  if (!isJsonMap(json))
    throw new FieldsV1Error(`FieldsV1 at ${where === '' ? 'the root' : where} is not an object`);
  const node = newNode();
  let member = false;
  for (const [key, value] of Object.entries(json)) {
    if (key === '.') {
      member = true;
      continue;
    }
    const pe = parsePathElement(key);
    if (pe === undefined) continue;
    const child = readFieldsV1(value, where + (where === '' ? '' : ' ') + key);
    if (child.member) node.members.set(pe.id, pe);
    // Two spellings of one element (key fields in another order): the last one wins, as in SMD.
    if (!isEmptyNode(child.node)) node.children.set(pe.id, { pe, node: child.node });
  }
  // An object with nothing but "." (or nothing at all) marks a leaf member.
  return { node, member: member || isEmptyNode(node) };
}

/** Wraps a built node; set once by FieldSet's static block so the builder can reach the private constructor. */
let wrapNode: (root: Node) => FieldSet;

/** An immutable set of field paths. */
export class FieldSet {
  /** The empty set. */
  static readonly EMPTY = new FieldSet(EMPTY_NODE);

  readonly #root: Node;

  private constructor(root: Node) {
    this.#root = root;
  }

  static {
    wrapNode = (root) => (isEmptyNode(root) ? FieldSet.EMPTY : new FieldSet(root));
  }

  /** The set of these paths (the empty path, "the whole object", is never a member: SMD does not track it). */
  static fromPaths(paths: Iterable<Path>): FieldSet {
    const b = new FieldSetBuilder();
    for (const p of paths) b.insert(p);
    return b.build();
  }

  /**
   * Decodes a FieldsV1 document. Keys of unknown element types are skipped, as SMD does;
   * `null`/absent FieldsV1 is the caller's to treat as the empty set.
   * @throws FieldsV1Error when a value is not an object or a key is malformed.
   * @example FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {} } }).paths() // [[spec, replicas]]
   */
  static fromFieldsV1(json: unknown): FieldSet {
    return wrapNode(readFieldsV1(json, '').node);
  }

  /** The FieldsV1 document of this set, with keys in kube's order (a fresh object). */
  toFieldsV1(): JsonMap {
    return emitFieldsV1(this.#root, false);
  }

  /** True when no path is a member. */
  isEmpty(): boolean {
    return isEmptyNode(this.#root);
  }

  /** Number of member paths. */
  get size(): number {
    return countMembers(this.#root);
  }

  /** True when `path` is a member (not merely a prefix of members). */
  has(path: Path): boolean {
    if (path.length === 0) return false;
    let node = this.#root;
    for (let i = 0; i < path.length - 1; i++) {
      const c = node.children.get((path[i] as PathElement).id);
      if (c === undefined) return false;
      node = c.node;
    }
    return node.members.has((path[path.length - 1] as PathElement).id);
  }

  /** True when element `pe` is a member at the top of this set. */
  hasMember(pe: PathElement): boolean {
    return this.#root.members.has(pe.id);
  }

  /** The paths below `pe`, with `pe` removed from their front (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    const c = this.#root.children.get(pe.id);
    return c === undefined ? FieldSet.EMPTY : new FieldSet(c.node);
  }

  /** True when some member path starts with `pe` (and is longer). */
  hasChildren(pe: PathElement): boolean {
    return this.#root.children.has(pe.id);
  }

  /** Top-level members and prefixes, unordered: `[element, subset below it or undefined]`. */
  *entries(): IterableIterator<[PathElement, FieldSet | undefined]> {
    const root = this.#root;
    for (const [id, pe] of root.members) {
      const c = root.children.get(id);
      yield [pe, c === undefined ? undefined : new FieldSet(c.node)];
    }
    for (const [id, c] of root.children) if (!root.members.has(id)) yield [c.pe, new FieldSet(c.node)];
  }

  /** Paths in either set. */
  union(other: FieldSet): FieldSet {
    return wrapNode(union(this.#root, other.#root));
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    return wrapNode(intersection(this.#root, other.#root));
  }

  /** Paths of this set that are not members of `other` (paths below removed members stay). */
  difference(other: FieldSet): FieldSet {
    return wrapNode(difference(this.#root, other.#root));
  }

  /** Paths of this set that are neither members of `other` nor below one of its members. */
  recursiveDifference(other: FieldSet): FieldSet {
    return wrapNode(recursiveDifference(this.#root, other.#root));
  }

  /** Members that are not also prefixes of other members (the fields themselves, not their containers). */
  leaves(): FieldSet {
    return wrapNode(leaves(this.#root));
  }

  /** Same members. */
  equals(other: FieldSet): boolean {
    return nodeEquals(this.#root, other.#root);
  }

  /** Member paths in SMD's iteration order: at each level members first, then each child's paths. */
  paths(): Path[] {
    const out: Path[] = [];
    const walk = (node: Node, prefix: PathElement[]): void => {
      for (const pe of [...node.members.values()].sort(byElement)) out.push([...prefix, pe]);
      const children = [...node.children.values()].sort((x, y) => comparePathElements(x.pe, y.pe));
      for (const c of children) walk(c.node, [...prefix, c.pe]);
    };
    walk(this.#root, []);
    return out;
  }

  /** One rendered path per line, as SMD prints sets. */
  toString(): string {
    return this.paths().map(pathToString).join('\n');
  }
}

/**
 * Builds a {@link FieldSet} by inserting paths; after {@link build} the builder is spent
 * (the set takes its nodes over, so later inserts would break immutability).
 */
export class FieldSetBuilder {
  #root: Node | undefined = newNode();
  #inserts = 0;

  /** How many times {@link insert} was called (walkers compare it to see whether a subtree added anything). */
  get inserts(): number {
    return this.#inserts;
  }

  /** Adds `path` as a member; parents are not added. The empty path is ignored. */
  insert(path: Path): void {
    const root = this.#root;
    if (root === undefined) throw new Error('FieldSetBuilder used after build()');
    this.#inserts++;
    if (path.length === 0) return;
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i] as PathElement;
      let c = node.children.get(pe.id);
      if (c === undefined) {
        c = { pe, node: newNode() };
        node.children.set(pe.id, c);
      }
      node = c.node;
    }
    const last = path[path.length - 1] as PathElement;
    node.members.set(last.id, last);
  }

  /** The set of everything inserted. */
  build(): FieldSet {
    const root = this.#root;
    if (root === undefined) throw new Error('FieldSetBuilder used after build()');
    this.#root = undefined;
    return wrapNode(root);
  }
}
