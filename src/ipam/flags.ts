/**
 * `--service-cluster-ip-range` and `--service-node-port-range` as kube-apiserver reads them:
 * one CIDR or two of different families (dual-stack), 10.0.0.0/24 when unset (kube's
 * `DefaultServiceIPCIDR`); a port range `N1-N2` (default 30000-32767).
 */
import { parseCidr, type Cidr } from '../api/cidr.js';
import { parsePortRange, type PortRange } from './node-ports.js';

/** kube-apiserver's range when the flag is unset. */
export const DEFAULT_SERVICE_CIDR = '10.0.0.0/24';

/**
 * The service ranges of the flag's value, primary first.
 * @throws RangeError with kube's reason for a bad value.
 */
export function parseServiceClusterIPRange(value: string): Cidr[] {
  const texts = (value === '' ? DEFAULT_SERVICE_CIDR : value).split(',').map((s) => s.trim());
  if (texts.length > 2) {
    throw new RangeError('--service-cluster-ip-range can contain at most two CIDRs (dual-stack)');
  }
  const cidrs = texts.map((t) => {
    try {
      return parseCidr(t);
    } catch {
      throw new RangeError(`--service-cluster-ip-range: ${JSON.stringify(t)} is not a valid CIDR`);
    }
  });
  if (cidrs.length === 2 && cidrs[0]?.family === cidrs[1]?.family) {
    throw new RangeError(
      '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family',
    );
  }
  for (const c of cidrs) {
    if (c.size < 4n) throw new RangeError(`--service-cluster-ip-range ${c.text} is too small`);
  }
  return cidrs;
}

/**
 * The node port range of `--service-node-port-range`.
 * @throws RangeError for a bad value.
 */
export function parseServiceNodePortRange(value: string): PortRange {
  try {
    return parsePortRange(value);
  } catch {
    throw new RangeError(`--service-node-port-range: ${JSON.stringify(value)} is not a port range N1-N2`);
  }
}
