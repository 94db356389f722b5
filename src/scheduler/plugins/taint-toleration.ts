/**
 * TaintToleration: NoSchedule and NoExecute taints must be tolerated (filter); fewer untolerated
 * PreferNoSchedule taints score higher (reversed normalization, weight 3 by default).
 */
import type { Toleration } from '../../api/types/core-v1.js';
import { defaultNormalizeScore, type Plugin } from '../framework/types.js';
import { unresolvable } from '../framework/status.js';
import { PLUGIN } from './names.js';
import { firstUntolerated, toleratedByAny } from './taints.js';

const HARD = new Set(['NoSchedule', 'NoExecute']);
const STATE = `${PLUGIN.TaintToleration}/prescore`;

/** The plugin. */
export function taintToleration(): Plugin {
  return {
    name: PLUGIN.TaintToleration,
    events: [
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
      { resource: 'Pod', action: 'Update' },
    ],
    filter(_state, pod, node) {
      const taint = firstUntolerated(node.taints, pod.pod.spec?.tolerations ?? [], HARD);
      if (taint === undefined) return undefined;
      return unresolvable(`node(s) had untolerated taint {${taint.key ?? ''}: ${taint.value ?? ''}}`);
    },
    preScore(state, pod) {
      const prefer = (pod.pod.spec?.tolerations ?? []).filter(
        (t) => t.effect === undefined || t.effect === '' || t.effect === 'PreferNoSchedule',
      );
      state.write(STATE, prefer);
      return undefined;
    },
    score(state, _pod, node) {
      const tolerations = state.read<Toleration[]>(STATE) ?? [];
      let n = 0;
      for (const taint of node.taints) {
        if (taint.effect === 'PreferNoSchedule' && !toleratedByAny(tolerations, taint)) n++;
      }
      return n;
    },
    normalizeScore(_state, _pod, scores) {
      defaultNormalizeScore(scores, true);
    },
  };
}
