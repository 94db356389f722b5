/**
 * kube's certificate usages (`certificates.k8s.io/v1` KeyUsage strings) as X.509 extensions, as
 * kube's signing policy maps them: keyUsage bits OR-ed together, extended usages deduplicated
 * and ordered as Go's `x509.ExtKeyUsage` enumeration.
 */
import type { KeyUsages } from '../../pki/certificate.js';

/** keyUsage bit numbers (RFC 5280 4.2.1.3) by kube's usage name. */
const KEY_USAGE_BITS: ReadonlyMap<string, number> = new Map([
  ['signing', 0],
  ['digital signature', 0],
  ['content commitment', 1],
  ['key encipherment', 2],
  ['data encipherment', 3],
  ['key agreement', 4],
  ['cert sign', 5],
  ['crl sign', 6],
  ['encipher only', 7],
  ['decipher only', 8],
]);

/** Extended key usage OIDs in Go's enumeration order (the order they are written in). */
const EXT_KEY_USAGES: readonly (readonly [names: readonly string[], oid: string])[] = [
  [['any'], '2.5.29.37.0'],
  [['server auth'], '1.3.6.1.5.5.7.3.1'],
  [['client auth'], '1.3.6.1.5.5.7.3.2'],
  [['code signing'], '1.3.6.1.5.5.7.3.3'],
  [['email protection', 's/mime'], '1.3.6.1.5.5.7.3.4'],
  [['ipsec end system'], '1.3.6.1.5.5.7.3.5'],
  [['ipsec tunnel'], '1.3.6.1.5.5.7.3.6'],
  [['ipsec user'], '1.3.6.1.5.5.7.3.7'],
  [['timestamping'], '1.3.6.1.5.5.7.3.8'],
  [['ocsp signing'], '1.3.6.1.5.5.7.3.9'],
  [['microsoft sgc'], '1.3.6.1.4.1.311.10.3.3'],
  [['netscape sgc'], '2.16.840.1.113730.4.1'],
];

/** A usage kube does not know; the message is kube's. */
export class UsageError extends Error {
  constructor(unrecognized: readonly string[]) {
    super(`unrecognized usage values: [${unrecognized.map((u) => JSON.stringify(u)).join(' ')}]`);
    this.name = 'UsageError';
  }
}

/**
 * The extensions `usages` ask for.
 * @throws UsageError when one is not a kube usage.
 */
export function keyUsagesOf(usages: readonly string[]): KeyUsages {
  const bits = new Set<number>();
  const ext = new Set<number>();
  const unrecognized: string[] = [];
  for (const u of usages) {
    const bit = KEY_USAGE_BITS.get(u);
    if (bit !== undefined) {
      bits.add(bit);
      continue;
    }
    const index = EXT_KEY_USAGES.findIndex(([names]) => names.includes(u));
    if (index >= 0) ext.add(index);
    else unrecognized.push(u);
  }
  if (unrecognized.length > 0) throw new UsageError(unrecognized);
  return {
    keyUsageBits: [...bits].sort((a, b) => a - b),
    extKeyUsageOids: [...ext].sort((a, b) => a - b).map((i) => EXT_KEY_USAGES[i]?.[1] ?? ''),
  };
}
