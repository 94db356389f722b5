/**
 * A container's CRI mounts from its `volumeMounts`, as kubelet's makeMounts builds them:
 * - the volume must be one of the pod's (`cannot find volume "x" to mount into container "c"`);
 * - `subPath`, or `subPathExpr` expanded with the container's env (`$(VAR)`), must be relative
 *   and free of `..`; a missing sub path is made as a directory (0750); a sub path that resolves
 *   (through symlinks) outside its volume is refused, in place of kubelet's safe bind mount;
 * - the mount is read-only when the volumeMount says so or the volume is of a read-only kind
 *   (configMap, secret, downwardAPI, projected);
 * - `mountPropagation`: None (private), HostToContainer, Bidirectional (privileged only).
 * Failures are {@link MountConfigError}s (the container's CreateContainerConfigError).
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import type { Container } from '../../api/types/core-v1.js';
import type * as CRI from '../cri/types.js';
import { expandVars } from '../runtime/env.js';
import { MountConfigError } from './errors.js';

/** A set-up volume: where it is on the host and whether containers may only read it. */
export interface MountedVolume {
  readonly hostPath: string;
  readonly readOnly: boolean;
}

async function resolveSubPath(volume: string, sub: string, volName: string): Promise<string> {
  if (isAbsolute(sub)) throw new MountConfigError(`error SubPath "${sub}" must not be an absolute path`);
  if (sub.split('/').includes('..'))
    throw new MountConfigError(`error SubPath "${sub}" must not contain '..'`);
  const full = join(volume, sub);
  const exists = await stat(full).then(
    () => true,
    () => false,
  );
  if (!exists) await mkdir(full, { recursive: true, mode: 0o750 });
  const [base, real] = await Promise.all([realpath(volume), realpath(full)]);
  if (real !== base && !real.startsWith(base + sep)) {
    throw new MountConfigError(
      `failed to prepare subPath for volumeMount "${volName}": subpath "${real}" not within volume path "${base}"`,
    );
  }
  return real;
}

/** kubelet's translateMountPropagation. */
function propagationOf(
  container: Container,
  mode: string | undefined,
): NonNullable<CRI.Mount['propagation']> {
  switch (mode ?? 'None') {
    case 'None':
      return 'PROPAGATION_PRIVATE';
    case 'HostToContainer':
      return 'PROPAGATION_HOST_TO_CONTAINER';
    case 'Bidirectional':
      if (!container.securityContext?.privileged) {
        throw new MountConfigError(
          'Bidirectional mount propagation is available only to privileged containers',
        );
      }
      return 'PROPAGATION_BIDIRECTIONAL';
    default:
      throw new MountConfigError(`invalid MountPropagation mode: ${mode ?? ''}`);
  }
}

/** The CRI mounts of one container. `env` is its resolved environment (for `subPathExpr`). */
export async function makeMounts(
  container: Container,
  volumes: ReadonlyMap<string, MountedVolume>,
  env: ReadonlyMap<string, string>,
): Promise<CRI.Mount[]> {
  const out: CRI.Mount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const name = m.name ?? '';
    const vol = volumes.get(name);
    if (!vol) {
      throw new MountConfigError(
        `cannot find volume "${name}" to mount into container "${container.name ?? ''}"`,
      );
    }
    let sub = m.subPath ?? '';
    if (m.subPathExpr) {
      const missing = [...m.subPathExpr.replaceAll('$$', '').matchAll(/\$\(([^)]*)\)/g)]
        .map((x) => x[1] ?? '')
        .filter((k) => !env.get(k));
      if (missing.length > 0) {
        throw new MountConfigError(
          `unable to expand subPath "${m.subPathExpr}" for volume ${name}: missing value for ${missing.join(', ')}`,
        );
      }
      sub = expandVars(m.subPathExpr, env);
    }
    const hostPath = sub ? await resolveSubPath(vol.hostPath, sub, name) : vol.hostPath;
    const propagation = propagationOf(container, m.mountPropagation);
    out.push({
      containerPath: m.mountPath ?? '',
      hostPath,
      readonly: (m.readOnly ?? false) || vol.readOnly,
      ...(propagation === 'PROPAGATION_PRIVATE' ? {} : { propagation }),
    });
  }
  return out;
}
