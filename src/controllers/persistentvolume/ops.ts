/**
 * What the binder's sync functions read and write: the caches and the API, behind one
 * interface so the decisions (`claim-sync.ts`, `volume-sync.ts`) stay free of plumbing.
 * Writes return the server's copy, which later steps of the same sync continue from.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import type { StorageClass } from '../../api/types/storage-v1.js';

/** A claim's or volume's phase. */
export type ClaimPhase = 'Pending' | 'Bound' | 'Lost';
export type VolumePhase = 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';

/** The binder's view of the cluster. */
export interface BinderOps {
  volumes(): PersistentVolume[];
  volume(name: string): PersistentVolume | undefined;
  /** The claim from the cache, else from the server (undefined: it does not exist). */
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  storageClass(name: string): StorageClass | undefined;
  /** Pods of the claim's namespace that mount it. */
  podsUsing(pvc: PersistentVolumeClaim): Pod[];
  updateVolume(pv: PersistentVolume): Promise<PersistentVolume>;
  /** Writes the phase (and message) when it changed; stamps `lastPhaseTransitionTime`. */
  setVolumePhase(pv: PersistentVolume, phase: VolumePhase, message?: string): Promise<PersistentVolume>;
  updateClaim(pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** Writes phase, and for Bound the volume's access modes and capacity, when they changed. */
  setClaimStatus(
    pvc: PersistentVolumeClaim,
    phase: ClaimPhase,
    volume?: PersistentVolume,
  ): Promise<PersistentVolumeClaim>;
  event(
    obj: PersistentVolume | PersistentVolumeClaim,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
  ): void;
  enqueueClaim(namespace: string, name: string): void;
  /** Whether claims of classes with a provisioner are sent to it (`--enable-dynamic-provisioning`). */
  readonly dynamicProvisioning: boolean;
}
