/**
 * VolumeZone: a bound claim's volume labelled with a zone or region (topology.kubernetes.io/* or
 * the deprecated failure-domain.beta.kubernetes.io/*) admits only nodes in that zone or region;
 * several values are separated by `__`.
 */
import type { Handle, Plugin } from '../framework/types.js';
import { SKIP, unresolvable } from '../framework/status.js';
import { PLUGIN } from './names.js';

const ZONE_KEYS = [
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
];

/** VolumeZone. */
export function volumeZone(_args: Record<string, unknown>, handle: Handle): Plugin {
  const STATE = `${PLUGIN.VolumeZone}/constraints`;
  return {
    name: PLUGIN.VolumeZone,
    events: [
      { resource: 'PersistentVolumeClaim', action: '*' },
      { resource: 'PersistentVolume', action: '*' },
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
    ],
    preFilter(state, pod) {
      const constraints: { key: string; values: Set<string> }[] = [];
      for (const key of pod.claims) {
        const [ns = '', name = ''] = key.split('/');
        const pvName = handle.lister.pvc(ns, name)?.spec?.volumeName ?? '';
        if (pvName === '') continue;
        const labels = handle.lister.pv(pvName)?.metadata.labels ?? {};
        for (const k of ZONE_KEYS) {
          const v = labels[k];
          if (v !== undefined) constraints.push({ key: k, values: new Set(v.split('__')) });
        }
      }
      if (constraints.length === 0) return { status: SKIP };
      state.write(STATE, constraints);
      return undefined;
    },
    filter(state, _pod, node) {
      const cs = state.read<{ key: string; values: Set<string> }[]>(STATE) ?? [];
      const labels = node.node?.metadata.labels ?? {};
      for (const c of cs) {
        const v =
          labels[c.key] ??
          labels[c.key.replace('failure-domain.beta.kubernetes.io/', 'topology.kubernetes.io/')];
        if (v === undefined || !c.values.has(v)) return unresolvable('node(s) had no available volume zone');
      }
      return undefined;
    },
  };
}
