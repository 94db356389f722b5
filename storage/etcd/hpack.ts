/**
 * HPACK (RFC 7541), as much as a gRPC client needs: a full decoder for the header blocks etcd
 * sends (static and dynamic table, Huffman strings, table size updates) and an encoder that
 * writes every request header as a literal without indexing, so it keeps no state.
 *
 * Header names and values are handled as latin1: each octet is one character, which is what
 * HPACK's sizes count and all gRPC headers are ASCII.
 */
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, STATIC_TABLE } from './hpack-tables.js';

/** A header block that does not decode (a connection error in HTTP/2: COMPRESSION_ERROR). */
export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = 'HpackError';
  }
}

/** The Huffman code as a binary tree: node n's children are at 2n and 2n + 1; a leaf holds -(symbol + 1). */
const HUFFMAN_TREE = buildHuffmanTree();

function buildHuffmanTree(): Int32Array {
  // 257 codes make 256 inner nodes; node 0 is unused, the root is node 1.
  const children = new Int32Array(2 * 512);
  let next = 2;
  for (let symbol = 0; symbol < HUFFMAN_CODES.length; symbol++) {
    const code = HUFFMAN_CODES[symbol] as number;
    const length = HUFFMAN_LENGTHS[symbol] as number;
    let node = 1;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = 2 * node + ((code >>> bit) & 1);
      if (bit === 0) {
        children[slot] = -(symbol + 1);
      } else {
        if (children[slot] === 0) children[slot] = next++;
        node = children[slot] as number;
      }
    }
  }
  return children;
}

/** Decodes a Huffman-coded string (RFC 7541 §5.2): padding is at most 7 one-bits, EOS never appears. */
export function huffmanDecode(bytes: Uint8Array): string {
  let out = '';
  let node = 1;
  let depth = 0; // bits read since the last symbol
  let allOnes = true;
  for (const byte of bytes) {
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >>> bit) & 1;
      const child = HUFFMAN_TREE[2 * node + b] as number;
      depth += 1;
      allOnes &&= b === 1;
      if (child < 0) {
        const symbol = -child - 1;
        if (symbol === 256) throw new HpackError('EOS in a Huffman string');
        out += String.fromCharCode(symbol);
        node = 1;
        depth = 0;
        allOnes = true;
      } else if (child === 0) {
        throw new HpackError('invalid Huffman code');
      } else {
        node = child;
      }
    }
  }
  if (depth > 7 || !allOnes) throw new HpackError('invalid Huffman padding');
  return out;
}

/** A decoded header field list: names are lower case, as HTTP/2 requires. */
export type HeaderList = [name: string, value: string][];

/** One connection's HPACK decoding context: its dynamic table lives as long as the connection. */
export class HpackDecoder {
  /** Newest first. */
  readonly #table: [string, string][] = [];
  #size = 0;
  #maxSize: number;
  /** The largest size the table may be set to: what we announced in SETTINGS_HEADER_TABLE_SIZE. */
  readonly #limit: number;

  constructor(limit = 4096) {
    this.#limit = limit;
    this.#maxSize = limit;
  }

  /** Decodes one complete header block (HEADERS plus any CONTINUATION fragments). */
  decode(block: Uint8Array): HeaderList {
    const headers: HeaderList = [];
    const reader = { bytes: block, pos: 0 };
    let fieldSeen = false;
    while (reader.pos < block.length) {
      const first = block[reader.pos] as number;
      if (first & 0x80) {
        headers.push(this.#entry(readInt(reader, 7)));
        fieldSeen = true;
      } else if (first & 0x40) {
        const field = this.#literal(reader, 6);
        this.#add(field);
        headers.push(field);
        fieldSeen = true;
      } else if (first & 0x20) {
        // A size update must come before the block's first field.
        if (fieldSeen) throw new HpackError('table size update after a header field');
        const size = readInt(reader, 5);
        if (size > this.#limit) throw new HpackError(`table size ${size} over the limit ${this.#limit}`);
        this.#maxSize = size;
        this.#evict(0);
      } else {
        headers.push(this.#literal(reader, 4)); // without indexing, or never indexed
        fieldSeen = true;
      }
    }
    return headers;
  }

  #entry(index: number): [string, string] {
    if (index === 0) throw new HpackError('index 0');
    if (index <= STATIC_TABLE.length) {
      const [name, value] = STATIC_TABLE[index - 1] as readonly [string, string];
      return [name, value];
    }
    const entry = this.#table[index - STATIC_TABLE.length - 1];
    if (entry === undefined) throw new HpackError(`index ${index} beyond the table`);
    return [entry[0], entry[1]];
  }

  #literal(reader: Reader, prefix: number): [string, string] {
    const index = readInt(reader, prefix);
    const name = index === 0 ? readString(reader) : this.#entry(index)[0];
    return [name, readString(reader)];
  }

  #add(field: [string, string]): void {
    const size = field[0].length + field[1].length + 32;
    this.#evict(size);
    // An entry larger than the table empties it and is not added (RFC 7541 §4.4).
    if (size > this.#maxSize) return;
    this.#table.unshift([field[0], field[1]]);
    this.#size += size;
  }

  /** Evicts oldest entries until `incoming` more octets fit. */
  #evict(incoming: number): void {
    while (this.#size + incoming > this.#maxSize && this.#table.length > 0) {
      const [name, value] = this.#table.pop() as [string, string];
      this.#size -= name.length + value.length + 32;
    }
  }
}

interface Reader {
  readonly bytes: Uint8Array;
  pos: number;
}

/** An integer with an N-bit prefix (RFC 7541 §5.1). */
function readInt(reader: Reader, prefix: number): number {
  const { bytes } = reader;
  const mask = (1 << prefix) - 1;
  let value = (bytes[reader.pos++] as number) & mask;
  if (value < mask) return value;
  let shift = 0;
  for (;;) {
    if (reader.pos >= bytes.length) throw new HpackError('truncated integer');
    const b = bytes[reader.pos++] as number;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
    if (shift > 28) throw new HpackError('integer too large');
  }
  return value;
}

function readString(reader: Reader): string {
  if (reader.pos >= reader.bytes.length) throw new HpackError('truncated string');
  const huffman = ((reader.bytes[reader.pos] as number) & 0x80) !== 0;
  const length = readInt(reader, 7);
  const end = reader.pos + length;
  if (end > reader.bytes.length) throw new HpackError('truncated string');
  const raw = reader.bytes.subarray(reader.pos, end);
  reader.pos = end;
  return huffman
    ? huffmanDecode(raw)
    : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
}

/**
 * Encodes header fields as literals without indexing, with the name indexed when the static
 * table has it. Strings are written raw (no Huffman). The result depends only on the input.
 */
export function encodeHeaders(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: number[] = [];
  for (const [name, value] of fields) {
    const index = STATIC_TABLE.findIndex(([n]) => n === name) + 1;
    writeInt(parts, index, 4, 0x00);
    if (index === 0) writeString(parts, name);
    writeString(parts, value);
  }
  return Buffer.from(parts);
}

function writeInt(out: number[], value: number, prefix: number, flags: number): void {
  const mask = (1 << prefix) - 1;
  if (value < mask) {
    out.push(flags | value);
    return;
  }
  out.push(flags | mask);
  let rest = value - mask;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

function writeString(out: number[], s: string): void {
  const bytes = Buffer.from(s, 'latin1');
  writeInt(out, bytes.length, 7, 0x00);
  for (const b of bytes) out.push(b);
}
