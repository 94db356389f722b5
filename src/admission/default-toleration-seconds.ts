/**
 * kube's DefaultTolerationSeconds: a new pod that does not tolerate the `not-ready` and
 * `unreachable` NoExecute taints gets tolerations for them with `tolerationSeconds` (300 by
 * default: `--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`).
 */
import type { AdmissionPlugin } from './types.js';
import { isCore, objectList, specOf } from './pod-spec.js';

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

export function defaultTolerationSeconds(seconds: {
  readonly notReady: number;
  readonly unreachable: number;
}): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    handles: (a) => isCore(a, 'Pod') && a.operation === 'CREATE' && a.subresource === undefined,
    admit: (a) => {
      if (a.object === undefined) return;
      const spec = specOf(a.object, true);
      const tolerations = objectList(spec['tolerations']);
      const tolerates = (key: string): boolean =>
        tolerations.some(
          (t) =>
            (t['key'] === key || t['key'] === undefined || t['key'] === '') &&
            (t['effect'] === 'NoExecute' || t['effect'] === undefined || t['effect'] === ''),
        );
      const added = [...tolerations];
      if (!tolerates(NOT_READY)) {
        added.push({
          key: NOT_READY,
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: seconds.notReady,
        });
      }
      if (!tolerates(UNREACHABLE)) {
        added.push({
          key: UNREACHABLE,
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: seconds.unreachable,
        });
      }
      if (added.length !== tolerations.length) spec['tolerations'] = added;
    },
  };
}
