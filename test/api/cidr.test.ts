/**
 * The service range arithmetic and flag parsing: CIDRs parse as Go's ParseCIDR (host bits
 * cleared), addresses print canonically (RFC 5952 for IPv6, as Go's netip), offsets round-trip,
 * and bad `--service-cluster-ip-range`/`--service-node-port-range` values fail the start with a
 * clear message.
 */
import { describe, expect, it } from 'vitest';
import { bigintToIp, ipAt, ipToBigint, offsetIn, parseCidr, usableOffsets } from '../../src/api/cidr.js';
import { parsePortRange } from '../../src/ipam/node-ports.js';
import { parseServerArgs } from '../../src/server/options.js';

describe('CIDR arithmetic', () => {
  it('parses IPv4 and IPv6 ranges and clears host bits', () => {
    const v4 = parseCidr('10.96.3.7/16');
    expect(v4.text).toBe('10.96.0.0/16');
    expect(v4.size).toBe(65536n);
    expect(usableOffsets(v4)).toEqual({ first: 1n, last: 65534n });
    const v6 = parseCidr('fd00:10:96::1/112');
    expect(v6.text).toBe('fd00:10:96::/112');
    expect(v6.family).toBe('IPv6');
    expect(usableOffsets(v6)).toEqual({ first: 1n, last: 65535n });
    expect(() => parseCidr('10.0.0.0')).toThrow(RangeError);
    expect(() => parseCidr('10.0.0.0/33')).toThrow(RangeError);
    expect(() => parseCidr('nonsense/8')).toThrow(RangeError);
  });

  it('prints canonical addresses and round-trips offsets', () => {
    expect(bigintToIp(ipToBigint('2001:db8:0:0:1:0:0:1') ?? 0n, 'IPv6')).toBe('2001:db8::1:0:0:1');
    expect(bigintToIp(ipToBigint('::') ?? 1n, 'IPv6')).toBe('::');
    expect(bigintToIp(ipToBigint('fd00::ffff:1.2.3.4') ?? 0n, 'IPv6')).toBe('fd00::ffff:102:304');
    const v6 = parseCidr('fd00:10:96::/112');
    expect(ipAt(v6, 10n)).toBe('fd00:10:96::a');
    expect(offsetIn(v6, 'fd00:10:96::a')).toBe(10n);
    const v4 = parseCidr('10.0.0.0/24');
    expect(ipAt(v4, 1n)).toBe('10.0.0.1');
    expect(offsetIn(v4, '10.0.1.1')).toBeUndefined();
    expect(offsetIn(v4, 'fd00::1')).toBeUndefined();
  });

  it('parses port ranges as kube does', () => {
    expect(parsePortRange('30000-32767')).toEqual({ base: 30000, size: 2768 });
    expect(parsePortRange('30000+10')).toEqual({ base: 30000, size: 10 });
    expect(() => parsePortRange('32767-30000')).toThrow(RangeError);
    expect(() => parsePortRange('a-b')).toThrow(RangeError);
  });
});

describe('service range flags', () => {
  it('defaults to 10.0.0.0/24 and takes two families', () => {
    const opts = parseServerArgs([]);
    if (opts.help) throw new Error('unexpected help');
    expect(opts.options.serviceClusterIPRanges.map((c) => c.text)).toEqual(['10.0.0.0/24']);
    expect(opts.options.serviceNodePortRange).toEqual({ base: 30000, size: 2768 });
    const dual = parseServerArgs(['--service-cluster-ip-range=10.1.0.0/16,fd00::/108']);
    if (dual.help) throw new Error('unexpected help');
    expect(dual.options.serviceClusterIPRanges.map((c) => c.family)).toEqual(['IPv4', 'IPv6']);
  });

  it('refuses bad values with a clear message', () => {
    expect(() => parseServerArgs(['--service-cluster-ip-range=10.1.0.0/16,10.2.0.0/16'])).toThrow(
      'must be of different IP family',
    );
    expect(() => parseServerArgs(['--service-cluster-ip-range=banana'])).toThrow('is not a valid CIDR');
    expect(() => parseServerArgs(['--service-node-port-range=30000-'])).toThrow('is not a port range');
  });
});
