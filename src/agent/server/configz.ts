/**
 * kubelet's `/configz`: the running configuration as a KubeletConfiguration
 * (`kubelet.config.k8s.io/v1beta1` field names) under the key `kubeletconfig`, flags and file
 * merged as the agent resolved them.
 */
import type { AgentConfig } from '../config.js';

function goDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h0m0s`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m0s`;
  return `${ms / 1000}s`;
}

/** The `/configz` document of a configuration. */
export function configzOf(c: AgentConfig): { kubeletconfig: Record<string, unknown> } {
  return {
    kubeletconfig: {
      enableServer: c.enableServer,
      staticPodPath: c.staticPodPath,
      fileCheckFrequency: goDuration(c.fileCheckFrequencyMs),
      httpCheckFrequency: goDuration(c.httpCheckFrequencyMs),
      staticPodURL: c.manifestURL,
      staticPodURLHeader: c.manifestURLHeader,
      address: c.address,
      port: c.port,
      tlsCertFile: c.tlsCertFile,
      tlsPrivateKeyFile: c.tlsPrivateKeyFile,
      rotateCertificates: c.rotateCertificates,
      serverTLSBootstrap: c.serverTLSBootstrap,
      authentication: {
        x509: { clientCAFile: c.clientCAFile },
        webhook: { enabled: false, cacheTTL: '2m0s' },
        anonymous: { enabled: c.anonymousAuth },
      },
      authorization: {
        mode: c.authorizationMode,
        webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' },
      },
      eventRecordQPS: c.eventQPS,
      eventBurst: c.eventBurst,
      enableDebuggingHandlers: c.enableDebuggingHandlers,
      healthzPort: c.healthzPort,
      healthzBindAddress: c.healthzBindAddress,
      clusterDomain: c.clusterDomain,
      clusterDNS: c.clusterDNS,
      cgroupRoot: c.cgroupRoot,
      cgroupDriver: 'cgroupfs',
      maxPods: c.maxPods,
      podCIDR: c.podCIDR,
      serializeImagePulls: c.serializeImagePulls,
      evictionHard: c.evictionHard,
      containerRuntimeEndpoint: c.containerRuntimeEndpoint,
      podLogsDir: c.podLogsDir,
    },
  };
}
