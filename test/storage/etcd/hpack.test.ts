import { describe, expect, it } from 'vitest';
import { encodeHeaders, HpackDecoder, HpackError, huffmanDecode } from '../../../storage/etcd/hpack.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('HPACK decoder', () => {
  // RFC 7541 Appendix C.4: three requests with Huffman strings on one connection's table.
  it('decodes the RFC 7541 C.4 request sequence (Huffman strings, dynamic table references)', () => {
    const decoder = new HpackDecoder();
    expect(decoder.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'))).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ]);
    expect(decoder.decode(hex('8286 84be 5886 a8eb 1064 9cbf'))).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ]);
    expect(decoder.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'))).toEqual([
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ]);
  });

  it('evicts the oldest entries when the table shrinks, and refuses an index past the end', () => {
    const decoder = new HpackDecoder();
    // Literal with incremental indexing, new name (RFC 7541 C.2.1): custom-key: custom-header (55 octets).
    decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
    expect(decoder.decode(hex('be'))).toEqual([['custom-key', 'custom-header']]);
    // A size update to 0 empties the table: index 62 no longer exists.
    expect(decoder.decode(hex('20'))).toEqual([]);
    expect(() => decoder.decode(hex('be'))).toThrow(HpackError);
  });

  it('refuses a table size over the announced limit, and a size update after a field', () => {
    expect(() => new HpackDecoder(4096).decode(hex('3fe2 1f'))).toThrow(/over the limit/); // 4097
    expect(() => new HpackDecoder().decode(hex('82 20'))).toThrow(/after a header field/);
  });

  it('refuses truncated blocks and bad Huffman padding', () => {
    expect(() => new HpackDecoder().decode(hex('400a 6375'))).toThrow(/truncated/);
    // "a" is 00011 in Huffman; padding with zero bits instead of ones is invalid.
    expect(huffmanDecode(hex('1f'))).toBe('a');
    expect(() => huffmanDecode(hex('18'))).toThrow(/padding/);
  });

  it('reads back what the encoder writes, including values longer than an integer prefix', () => {
    const fields: [string, string][] = [
      [':method', 'POST'],
      [':path', '/etcdserverpb.KV/Txn'],
      ['content-type', 'application/grpc'],
      ['x-long', 'v'.repeat(300)],
    ];
    expect(new HpackDecoder().decode(encodeHeaders(fields))).toEqual(fields);
  });
});
