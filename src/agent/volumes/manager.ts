/**
 * The agent's volume manager: sets up a pod's volumes before its containers start (kubelet's
 * WaitForAttachAndMount), keeps their files current, and tears them down when the pod is gone.
 *
 * Per volume kind, under `<root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>`:
 * - emptyDir: a directory (0777); `medium: Memory` mounts a tmpfs there (`sizeLimit` as its size);
 * - configMap, downwardAPI: files written by the atomic writer on disk;
 * - secret, projected: the same on a tmpfs, as kubelet keeps them off disk;
 * - hostPath: no directory; the host path itself after its `type` check;
 * - persistentVolumeClaim: the path of its bound hostPath or local PersistentVolume (claims.ts).
 *
 * With the pod's `fsGroup`, volumes are group-owned by it as kube's SetVolumeOwnership does.
 *
 * {@link VolumeManager.setUp} is idempotent and runs on every sync: a changed ConfigMap, Secret,
 * label or rotated token rewrites the files in place. ConfigMaps and Secrets are watched one by
 * one ({@link ObjectWatcher}); their change wakes the pods using them, and so does a token's
 * refresh time. A volume that fails after it was once set up keeps its old files (the pod keeps
 * running, kubelet does the same); one never set up holds the pod's containers back.
 *
 * {@link VolumeManager.tearDown} unmounts only the tmpfs mounts the agent made and removes the pod
 * directory, unless something else is mounted under it (then both stay, and it is logged).
 */
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigMap, Pod, Secret, Volume } from '../../api/types/core-v1.js';
import { CONFIG_MAPS, SECRETS, type Client } from '../../client/index.js';
import { apiLookup, type ApiLookup } from '../api/lookup.js';
import { parseQuantity } from '../runtime/resources.js';
import { hostNetworkHosts, managedHosts } from '../runtime/hosts.js';
import { newTerminationLog } from '../runtime/termination-message.js';
import { writeAtomic, type Payload } from './atomic-writer.js';
import { applyFsGroup } from './ownership.js';
import { apiClaimLookup, claimVolume, type ClaimLookup } from './claims.js';
import { VolumeSetUpError, messageOf } from './errors.js';
import { checkHostPath } from './hostpath.js';
import type { MountedVolume } from './mounts.js';
import { ObjectWatcher } from './objects.js';
import { podDir, podsDir, volumeDir } from './paths.js';
import {
  configMapPayload,
  downwardPayload,
  projectedPayload,
  secretPayload,
  type SourceContext,
} from './sources.js';
import { mountTmpfs, unmountPod } from './tmpfs.js';
import { TokenManager, apiTokenRequester } from './tokens.js';

/** The outcome of setting up a pod's volumes. */
export interface PodVolumes {
  /** Volume name → where it is; includes volumes that failed now but were set up before. */
  readonly volumes: ReadonlyMap<string, MountedVolume>;
  /** This round's failures (each one a FailedMount event). */
  readonly errors: readonly VolumeSetUpError[];
  /** True when every volume is in `volumes`: the containers may start. */
  readonly complete: boolean;
}

/** How a {@link VolumeManager} is set up. */
export interface VolumeManagerOptions {
  readonly rootDir: string;
  /** The API (absent standalone: no ConfigMaps, Secrets or tokens). */
  readonly client?: Client;
  /** The agent's reads of ConfigMaps and Secrets through `client` (default: one of its own). */
  readonly lookup?: ApiLookup;
  readonly nodeAllocatable: { readonly cpu: number; readonly memory: number };
  /** Syncs a pod again (an object it uses changed, a token needs a refresh). */
  wake(uid: string): void;
  /** Overrides the token manager (tests: a clock). */
  readonly tokens?: TokenManager;
  /** The clock of token refreshes (epoch ms; default Date.now, tests: the token manager's). */
  readonly now?: () => number;
}

const READ_ONLY_KINDS = new Set(['configMap', 'secret', 'downwardAPI', 'projected']);

/** The ConfigMaps and Secrets a pod's volumes name, as `namespace/name` keys. */
function references(pod: Pod): { configMaps: Set<string>; secrets: Set<string> } {
  const ns = pod.metadata.namespace ?? '';
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const v of pod.spec?.volumes ?? []) {
    if (v.configMap?.name) configMaps.add(`${ns}/${v.configMap.name}`);
    if (v.secret?.secretName) secrets.add(`${ns}/${v.secret.secretName}`);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap?.name) configMaps.add(`${ns}/${s.configMap.name}`);
      if (s.secret?.name) secrets.add(`${ns}/${s.secret.name}`);
    }
  }
  return { configMaps, secrets };
}

/** Volumes of every pod of one agent. */
export class VolumeManager {
  readonly #opts: VolumeManagerOptions;
  readonly #tokens: TokenManager | undefined;
  readonly #configMaps: ObjectWatcher<ConfigMap> | undefined;
  readonly #secrets: ObjectWatcher<Secret> | undefined;
  readonly #lookup: ApiLookup | undefined;
  readonly #claims: ClaimLookup | undefined;
  /** Pod uid → volumes set up at least once. */
  readonly #ready = new Map<string, Set<string>>();
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(opts: VolumeManagerOptions) {
    this.#opts = opts;
    const client = opts.client;
    const wakeAll = (pods: readonly string[]): void => pods.forEach((uid) => opts.wake(uid));
    this.#tokens = opts.tokens ?? (client ? new TokenManager(apiTokenRequester(client)) : undefined);
    this.#configMaps = client ? new ObjectWatcher<ConfigMap>(client, CONFIG_MAPS, wakeAll) : undefined;
    this.#secrets = client ? new ObjectWatcher<Secret>(client, SECRETS, wakeAll) : undefined;
    this.#lookup = opts.lookup ?? (client ? apiLookup(client) : undefined);
    this.#claims = client ? apiClaimLookup(client) : undefined;
  }

  #context(): SourceContext {
    const lookup = this.#lookup;
    return {
      configMap: (ns, name) =>
        this.#configMaps && lookup
          ? this.#configMaps.get(ns, name, () => lookup.configMap(ns, name))
          : Promise.resolve(undefined),
      secret: (ns, name) =>
        this.#secrets && lookup
          ? this.#secrets.get(ns, name, () => lookup.secret(ns, name))
          : Promise.resolve(undefined),
      token: (pod, source) => {
        if (!this.#tokens) throw new Error('failed to fetch token: the agent runs without an API server');
        return this.#tokens.token(pod, source);
      },
      nodeAllocatable: this.#opts.nodeAllocatable,
    };
  }

  /**
   * Writes the pod's `/etc/hosts` (`<pod dir>/etc-hosts`, kubelet's place for it) for `podIPs` and
   * returns its path: the managed file on the pod network, the node's own on the host network.
   */
  async hostsFile(pod: Pod, podIPs: readonly string[], clusterDomain: string): Promise<string> {
    const dir = podDir(this.#opts.rootDir, pod.metadata.uid ?? '');
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const text = pod.spec?.hostNetwork
      ? hostNetworkHosts(pod, await readFile('/etc/hosts', 'utf8'))
      : managedHosts(pod, podIPs, clusterDomain);
    const path = join(dir, 'etc-hosts');
    await writeFile(path, text, { mode: 0o644 });
    return path;
  }

  /**
   * A new termination log of one instance of a pod's container (kubelet's
   * `<pod dir>/containers/<name>/<random id>`), answers its host path.
   */
  terminationLog(pod: Pod, container: string): Promise<string> {
    return newTerminationLog(
      join(podDir(this.#opts.rootDir, pod.metadata.uid ?? ''), 'containers', container),
    );
  }

  /** Sets up (or refreshes) every volume of a pod. Never throws for one volume's failure. */
  async setUp(pod: Pod): Promise<PodVolumes> {
    const uid = pod.metadata.uid ?? '';
    const refs = references(pod);
    this.#configMaps?.register(uid, refs.configMaps);
    this.#secrets?.register(uid, refs.secrets);
    // kubelet's makePodDataDirs: the pod's directory exists from its first sync.
    const pdir = podDir(this.#opts.rootDir, uid);
    await mkdir(join(pdir, 'volumes'), { recursive: true, mode: 0o750 });
    await mkdir(join(pdir, 'plugins'), { recursive: true, mode: 0o750 });
    const ready = this.#ready.get(uid) ?? new Set<string>();
    this.#ready.set(uid, ready);
    const volumes = new Map<string, MountedVolume>();
    const errors: VolumeSetUpError[] = [];
    const ctx = this.#context();
    for (const v of pod.spec?.volumes ?? []) {
      const name = v.name ?? '';
      try {
        volumes.set(name, await this.#setUpOne(pod, v, ctx));
        ready.add(name);
      } catch (err) {
        errors.push(new VolumeSetUpError(name, messageOf(err)));
        const kind = kindOf(v);
        if (ready.has(name) && kind && kind !== 'hostPath' && kind !== 'persistentVolumeClaim') {
          volumes.set(name, {
            hostPath: volumeDir(this.#opts.rootDir, uid, kind, name),
            readOnly: READ_ONLY_KINDS.has(kind),
          });
        }
      }
    }
    this.#scheduleRefresh(uid);
    return { volumes, errors, complete: volumes.size === (pod.spec?.volumes ?? []).length };
  }

  async #setUpOne(pod: Pod, v: Volume, ctx: SourceContext): Promise<MountedVolume> {
    const uid = pod.metadata.uid ?? '';
    const name = v.name ?? '';
    const kind = kindOf(v);
    if (!kind) throw new Error('this node does not support the volume type');
    if (kind === 'persistentVolumeClaim') {
      const src = v.persistentVolumeClaim ?? {};
      return claimVolume(
        this.#claims,
        pod.metadata.namespace ?? '',
        src.claimName ?? '',
        src.readOnly ?? false,
      );
    }
    if (kind === 'hostPath') {
      const path = v.hostPath?.path ?? '';
      await checkHostPath(path, v.hostPath?.type);
      return { hostPath: path, readOnly: false };
    }
    const dir = volumeDir(this.#opts.rootDir, uid, kind, name);
    const pdir = podDir(this.#opts.rootDir, uid);
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const ns = pod.metadata.namespace ?? '';
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    // With an fsGroup, files are group-readable (kube's SetVolumeOwnership); the payload carries
    // that mode so an unchanged volume compares equal and is not rewritten.
    const write = async (payload: Payload): Promise<void> => {
      if (fsGroup === undefined) {
        await writeAtomic(dir, payload);
        return;
      }
      const grouped: Payload = new Map();
      for (const [k, f] of payload) grouped.set(k, { data: f.data, mode: f.mode | 0o440 });
      if (await writeAtomic(dir, grouped)) await applyFsGroup(dir, fsGroup, true);
    };
    switch (kind) {
      case 'emptyDir': {
        if (v.emptyDir?.medium === 'Memory') {
          const size = parseQuantity(v.emptyDir.sizeLimit);
          await mountTmpfs(pdir, dir, Number.isFinite(size) ? size : undefined);
        }
        if (!this.#ready.get(uid)?.has(name)) {
          await chmod(dir, 0o777);
          if (fsGroup !== undefined) await applyFsGroup(dir, fsGroup, false);
        }
        break;
      }
      case 'configMap': {
        const src = v.configMap ?? {};
        const cmName = src.name ?? '';
        const payload = configMapPayload(cmName, await ctx.configMap(ns, cmName), src, src.defaultMode);
        await write(payload);
        break;
      }
      case 'secret': {
        const src = v.secret ?? {};
        const sName = src.secretName ?? '';
        const payload = secretPayload(sName, await ctx.secret(ns, sName), src, src.defaultMode);
        await mountTmpfs(pdir, dir);
        await write(payload);
        break;
      }
      case 'downwardAPI': {
        const src = v.downwardAPI ?? {};
        await write(downwardPayload(pod, src.items, src.defaultMode, ctx));
        break;
      }
      case 'projected': {
        const src = v.projected ?? {};
        const payload = await projectedPayload(pod, src.sources, src.defaultMode, ctx);
        await mountTmpfs(pdir, dir);
        await write(payload);
        break;
      }
    }
    return { hostPath: dir, readOnly: READ_ONLY_KINDS.has(kind) };
  }

  #scheduleRefresh(uid: string): void {
    const old = this.#timers.get(uid);
    if (old) clearTimeout(old);
    this.#timers.delete(uid);
    const at = this.#tokens?.refreshAt(uid);
    if (at === undefined) return;
    // setTimeout holds at most ~24.8 days; a token refreshes well within that.
    const timer = setTimeout(
      () => {
        this.#timers.delete(uid);
        this.#opts.wake(uid);
      },
      Math.min(Math.max(at - (this.#opts.now ?? Date.now)(), 0) + 100, 2 ** 31 - 1),
    );
    timer.unref();
    this.#timers.set(uid, timer);
  }

  /**
   * Removes a pod's volumes: the agent's tmpfs mounts and the pod directory. Answers false (and
   * logs) when a mount the agent did not make is under the pod directory: both then stay.
   */
  async tearDown(uid: string): Promise<boolean> {
    this.#configMaps?.unregister(uid);
    this.#secrets?.unregister(uid);
    this.#tokens?.forget(uid);
    this.#ready.delete(uid);
    const t = this.#timers.get(uid);
    if (t) clearTimeout(t);
    this.#timers.delete(uid);
    const dir = podDir(this.#opts.rootDir, uid);
    const foreign = await unmountPod(dir);
    if (foreign.length > 0) {
      console.error(
        `agent: pod ${uid}: not removing ${dir}: mounts the agent did not make are under it: ${foreign.join(', ')}`,
      );
      return false;
    }
    await rm(dir, { recursive: true, force: true });
    return true;
  }

  /** Tears down the pod directories of pods not in `keep` (call once every source synced). */
  async cleanupOrphans(keep: ReadonlySet<string>): Promise<void> {
    const uids = await readdir(podsDir(this.#opts.rootDir)).catch(() => [] as string[]);
    for (const uid of uids) {
      if (keep.has(uid)) continue;
      await this.tearDown(uid).catch((err: unknown) =>
        console.error(`agent: removing the volumes of orphaned pod ${uid}: ${messageOf(err)}`),
      );
    }
  }

  /** Stops watches and timers (mounts stay: the next agent adopts them). */
  stop(): void {
    this.#configMaps?.stop();
    this.#secrets?.stop();
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }
}

/** The kind of a volume the agent supports, or undefined. */
function kindOf(
  v: Volume,
):
  | 'emptyDir'
  | 'configMap'
  | 'secret'
  | 'downwardAPI'
  | 'projected'
  | 'hostPath'
  | 'persistentVolumeClaim'
  | undefined {
  if (v.emptyDir) return 'emptyDir';
  if (v.configMap) return 'configMap';
  if (v.secret) return 'secret';
  if (v.downwardAPI) return 'downwardAPI';
  if (v.projected) return 'projected';
  if (v.hostPath) return 'hostPath';
  if (v.persistentVolumeClaim) return 'persistentVolumeClaim';
  return undefined;
}
