/**
 * kubelet's on-disk layout of a pod's volumes under `--root-dir`:
 * `<root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume>`. The plugin name is kube's
 * (`kubernetes.io/empty-dir`) with `/` escaped as `~`.
 */
import { join } from 'node:path';

/** kube's volume plugin names, by the volume source field that selects them. */
export const PLUGINS = {
  emptyDir: 'kubernetes.io/empty-dir',
  configMap: 'kubernetes.io/configmap',
  secret: 'kubernetes.io/secret',
  projected: 'kubernetes.io/projected',
  downwardAPI: 'kubernetes.io/downward-api',
  hostPath: 'kubernetes.io/host-path',
} as const;

/** A plugin of {@link PLUGINS}. */
export type PluginKind = keyof typeof PLUGINS;

/** The directory of every pod: `<root>/pods`. */
export function podsDir(rootDir: string): string {
  return join(rootDir, 'pods');
}

/** One pod's directory: `<root>/pods/<uid>`. */
export function podDir(rootDir: string, uid: string): string {
  return join(podsDir(rootDir), uid);
}

/** A volume's directory: `<root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>`. */
export function volumeDir(rootDir: string, uid: string, kind: PluginKind, name: string): string {
  return join(podDir(rootDir, uid), 'volumes', PLUGINS[kind].replace('/', '~'), name);
}
