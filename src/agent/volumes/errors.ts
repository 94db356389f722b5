/**
 * Why a volume could not be set up. The pod worker turns it into kubelet's `FailedMount` event,
 * whose message is kubelet's: `MountVolume.SetUp failed for volume "<name>" : <cause>`.
 */

/** One volume failed to set up; `detail` is kube's wording (`configmap "x" not found`). */
export class VolumeSetUpError extends Error {
  readonly volume: string;
  readonly detail: string;

  constructor(volume: string, cause: string) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${cause}`);
    this.name = 'VolumeSetUpError';
    this.volume = volume;
    this.detail = cause;
  }
}

/** A container's mounts cannot be made (kubelet's CreateContainerConfigError). */
export class MountConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MountConfigError';
  }
}

/** The message of anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
