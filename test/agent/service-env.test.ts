/**
 * The Service variables (src/agent/runtime/service-env.ts) against kubelet v1.33's
 * (pkg/kubelet/envvars and getServiceEnvVarMap): the `kubernetes` Service always, the pod
 * namespace's Services with enableServiceLinks, headless ones never, and each Service's
 * Docker-link variables; buildEnv puts them after the container's own and expands `$(VAR)` with
 * them.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod, Service } from '../../src/api/types/core-v1.js';
import { buildEnv, type EnvContext } from '../../src/agent/runtime/env.js';
import { serviceEnv } from '../../src/agent/runtime/service-env.js';

const svc = (ns: string, name: string, clusterIP: string, ports: Service['spec'] = {}): Service => ({
  metadata: { name, namespace: ns },
  spec: { clusterIP, ...ports },
});

const SERVICES: Service[] = [
  svc('default', 'kubernetes', '10.0.0.1', { ports: [{ name: 'https', port: 443, protocol: 'TCP' }] }),
  svc('shop', 'web-front', '10.0.0.20', {
    ports: [
      { port: 80, protocol: 'TCP' },
      { name: 'dns-udp', port: 53, protocol: 'UDP' },
    ],
  }),
  svc('shop', 'headless', 'None', { ports: [{ port: 80 }] }),
  svc('other', 'elsewhere', '10.0.0.30', { ports: [{ port: 80 }] }),
];

describe('service environment variables', () => {
  it('links the kubernetes Service and the namespace’s Services with a cluster IP, as kubelet', () => {
    expect(Object.fromEntries(serviceEnv(SERVICES, 'shop', true))).toEqual({
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://10.0.0.1:443',
      KUBERNETES_PORT_443_TCP: 'tcp://10.0.0.1:443',
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_PORT: '443',
      KUBERNETES_PORT_443_TCP_ADDR: '10.0.0.1',
      WEB_FRONT_SERVICE_HOST: '10.0.0.20',
      WEB_FRONT_SERVICE_PORT: '80',
      WEB_FRONT_SERVICE_PORT_DNS_UDP: '53',
      WEB_FRONT_PORT: 'tcp://10.0.0.20:80',
      WEB_FRONT_PORT_80_TCP: 'tcp://10.0.0.20:80',
      WEB_FRONT_PORT_80_TCP_PROTO: 'tcp',
      WEB_FRONT_PORT_80_TCP_PORT: '80',
      WEB_FRONT_PORT_80_TCP_ADDR: '10.0.0.20',
      WEB_FRONT_PORT_53_UDP: 'udp://10.0.0.20:53',
      WEB_FRONT_PORT_53_UDP_PROTO: 'udp',
      WEB_FRONT_PORT_53_UDP_PORT: '53',
      WEB_FRONT_PORT_53_UDP_ADDR: '10.0.0.20',
    });
  });

  it('keeps only the kubernetes Service without enableServiceLinks', () => {
    expect([...serviceEnv(SERVICES, 'shop', false).keys()].every((k) => k.startsWith('KUBERNETES_'))).toBe(
      true,
    );
  });

  it('adds them after the container’s own variables, which win, and expands $(VAR) with them', async () => {
    const container: Container = {
      name: 'c',
      env: [
        { name: 'API', value: 'https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)' },
        { name: 'WEB_FRONT_SERVICE_PORT', value: '8080' },
      ],
    };
    const pod: Pod = { metadata: { name: 'p', namespace: 'shop' }, spec: { containers: [container] } };
    const ctx: EnvContext = {
      lookup: {
        configMap: () => Promise.resolve(undefined),
        secret: () => Promise.resolve(undefined),
        services: () => Promise.resolve(SERVICES),
      },
      hostIPs: [],
      podIPs: [],
      nodeAllocatable: { cpu: 1, memory: 1 },
    };
    const env = await buildEnv(pod, container, ctx);
    const map = Object.fromEntries(env.map((e) => [e.key, e.value]));
    expect(env.slice(0, 2).map((e) => e.key)).toEqual(['API', 'WEB_FRONT_SERVICE_PORT']);
    expect(map['API']).toBe('https://10.0.0.1:443');
    expect(map['WEB_FRONT_SERVICE_PORT']).toBe('8080');
    expect(map['WEB_FRONT_SERVICE_HOST']).toBe('10.0.0.20');
    expect(map['ELSEWHERE_SERVICE_HOST']).toBeUndefined();
  });
});
