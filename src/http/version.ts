/**
 * `/version`: the server's version in kube-apiserver's `version.Info` shape. Capstan serves the
 * API of Kubernetes 1.33 (its group versions and kinds), so it reports `v1.33.0+capstan`: clients
 * gate features on major/minor, and the build metadata after `+` names the implementation
 * (semver ignores it when comparing).
 */
import type { FastifyInstance } from 'fastify';

/** The Kubernetes release whose API Capstan serves: major version. */
export const KUBERNETES_MAJOR = '1';
/** The Kubernetes release whose API Capstan serves: minor version. */
export const KUBERNETES_MINOR = '33';

/** kube-apiserver's `version.Info`, JSON field names as on the wire. */
export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  readonly emulationMajor: string;
  readonly emulationMinor: string;
  readonly minCompatibilityMajor: string;
  readonly minCompatibilityMinor: string;
  readonly gitVersion: string;
  readonly gitCommit: string;
  readonly gitTreeState: string;
  readonly buildDate: string;
  readonly goVersion: string;
  readonly compiler: string;
  readonly platform: string;
}

/**
 * The version document. `capstanVersion` (package.json) is not part of gitVersion, which must
 * parse as a Kubernetes version; it goes into gitCommit instead, the closest free-form field.
 */
export function versionInfo(capstanVersion: string): VersionInfo {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    emulationMajor: KUBERNETES_MAJOR,
    emulationMinor: KUBERNETES_MINOR,
    minCompatibilityMajor: KUBERNETES_MAJOR,
    minCompatibilityMinor: String(Number(KUBERNETES_MINOR) - 1),
    gitVersion: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0+capstan`,
    gitCommit: `capstan-${capstanVersion}`,
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'node',
    platform: `${process.platform}/${arch}`,
  };
}

/** Registers `GET /version` with a body rendered once. */
export function installVersionRoute(app: FastifyInstance, info: VersionInfo): void {
  const body = Buffer.from(JSON.stringify(info, null, 2), 'utf8');
  app.get('/version', (_request, reply) => reply.header('content-type', 'application/json').send(body));
}
