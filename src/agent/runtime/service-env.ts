/**
 * The Service environment variables kubelet gives every container (Docker-link style): for the
 * `kubernetes` Service of the `default` namespace always, and for each Service of the pod's own
 * namespace when `enableServiceLinks` (the default), each with a cluster IP:
 *
 *     <NAME>_SERVICE_HOST=10.0.0.1            <NAME>_SERVICE_PORT=443 (the first port)
 *     <NAME>_SERVICE_PORT_<PORT_NAME>=443     (each named port)
 *     <NAME>_PORT=tcp://10.0.0.1:443          (the first port)
 *     <NAME>_PORT_443_TCP=tcp://10.0.0.1:443  and its _PROTO, _PORT and _ADDR
 *
 * where a name is upper-cased with `-` as `_`. In-cluster clients find the API server by
 * `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`.
 */
import type { Service } from '../../api/types/core-v1.js';

/** The namespace and name of the API server's own Service, always linked. */
const MASTER_NAMESPACE = 'default';
const MASTER_SERVICE = 'kubernetes';

function varName(name: string): string {
  return name.replaceAll('-', '_').toUpperCase();
}

function hasClusterIP(s: Service): boolean {
  const ip = s.spec?.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The variables of one Service, in kubelet's order. */
function serviceVars(s: Service): [string, string][] {
  const prefix = varName(s.metadata.name ?? '');
  const ip = s.spec?.clusterIP ?? '';
  const ports = s.spec?.ports ?? [];
  const out: [string, string][] = [[`${prefix}_SERVICE_HOST`, ip]];
  out.push([`${prefix}_SERVICE_PORT`, String(ports[0]?.port ?? 0)]);
  for (const p of ports)
    if (p.name) out.push([`${prefix}_SERVICE_PORT_${varName(p.name)}`, String(p.port ?? 0)]);
  ports.forEach((p, i) => {
    const protocol = p.protocol || 'TCP';
    const url = `${protocol.toLowerCase()}://${hostPort(ip, p.port ?? 0)}`;
    if (i === 0) out.push([`${prefix}_PORT`, url]);
    const portPrefix = `${prefix}_PORT_${p.port ?? 0}_${protocol.toUpperCase()}`;
    out.push(
      [portPrefix, url],
      [`${portPrefix}_PROTO`, protocol.toLowerCase()],
      [`${portPrefix}_PORT`, String(p.port ?? 0)],
      [`${portPrefix}_ADDR`, ip],
    );
  });
  return out;
}

/** The Service variables of a pod in `namespace`, from every Service the node knows. */
export function serviceEnv(
  services: readonly Service[],
  namespace: string,
  enableServiceLinks: boolean,
): Map<string, string> {
  const linked = new Map<string, Service>();
  for (const s of services) {
    if (!hasClusterIP(s)) continue;
    const name = s.metadata.name ?? '';
    const ns = s.metadata.namespace ?? '';
    if (ns === MASTER_NAMESPACE && name === MASTER_SERVICE) {
      if (!linked.has(name)) linked.set(name, s);
    } else if (ns === namespace && enableServiceLinks) {
      linked.set(name, s);
    }
  }
  const out = new Map<string, string>();
  for (const name of [...linked.keys()].sort())
    for (const [k, v] of serviceVars(linked.get(name) as Service)) out.set(k, v);
  return out;
}
