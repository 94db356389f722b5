/** kube's AlwaysPullImages: every container of a new or updated pod gets `imagePullPolicy: Always`. */
import type { AdmissionPlugin } from './types.js';
import { allContainers, isCore, specOf } from './pod-spec.js';

export function alwaysPullImages(): AdmissionPlugin {
  return {
    name: 'AlwaysPullImages',
    handles: (a) =>
      isCore(a, 'Pod') &&
      (a.operation === 'CREATE' || a.operation === 'UPDATE') &&
      a.subresource === undefined,
    admit: (a) => {
      if (a.object === undefined) return;
      for (const c of allContainers(specOf(a.object))) c['imagePullPolicy'] = 'Always';
    },
  };
}
