/**
 * VolumeBinding: bound claims' volumes must admit the node; unbound claims of a
 * WaitForFirstConsumer class need an available volume on the node or a provisioner that may
 * provision there. At Reserve the choice is held in memory; PreBind writes it as kube's binder
 * does (claimRef on the chosen PV, `volume.kubernetes.io/selected-node` on claims to provision)
 * and waits until the claims are bound (by the PV controller).
 */
import type { PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import type { Handle, Plugin } from '../framework/types.js';
import { Code, SKIP, errorStatus, unresolvable, type Status } from '../framework/status.js';
import { compileNodeSelectorTerm } from '../selectors.js';
import { PLUGIN } from './names.js';
import { findMatchingVolume, volumeFitsNode } from './volume-matching.js';

/** The annotation naming the node a claim should be provisioned for. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

interface ClaimsState {
  readonly bound: readonly PersistentVolumeClaim[];
  readonly toBind: readonly PersistentVolumeClaim[];
  /** Node name → its plan. */
  readonly plans: Map<string, Plan>;
}

interface Plan {
  readonly staticBindings: readonly { pvc: PersistentVolumeClaim; pv: PersistentVolume }[];
  readonly provisions: readonly PersistentVolumeClaim[];
}

function claimFullyBound(pvc: PersistentVolumeClaim | undefined): boolean {
  if (pvc === undefined || (pvc.spec?.volumeName ?? '') === '') return false;
  return (
    pvc.status?.phase === 'Bound' ||
    pvc.metadata.annotations?.['pv.kubernetes.io/bind-completed'] !== undefined
  );
}

const STATE = `${PLUGIN.VolumeBinding}/state`;

/** The plugin; args: bindTimeoutSeconds (default 600). */
export function volumeBinding(args: Record<string, unknown>, handle: Handle): Plugin {
  const timeoutMs = ((args['bindTimeoutSeconds'] as number | undefined) ?? 600) * 1000;
  /** PV name → claim key, for volumes chosen at Reserve and not yet written. */
  const assumed = new Map<string, string>();
  const lister = handle.lister;

  function plan(state: ClaimsState, nodeName: string): Plan | Status {
    const node = handle.snapshot().get(nodeName)?.node;
    if (node === undefined) return unresolvable('node not found');
    for (const pvc of state.bound) {
      const pv = lister.pv(pvc.spec?.volumeName ?? '');
      if (pv === undefined) {
        return unresolvable('node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)');
      }
      if (!volumeFitsNode(pv, node)) return unresolvable('node(s) had volume node affinity conflict');
    }
    const taken = new Set(assumed.keys());
    const staticBindings: Plan['staticBindings'][number][] = [];
    const provisions: PersistentVolumeClaim[] = [];
    for (const pvc of state.toBind) {
      const pv = findMatchingVolume(pvc, lister.pvs(), node, taken);
      if (pv !== undefined) {
        taken.add(pv.metadata.name ?? '');
        staticBindings.push({ pvc, pv });
        continue;
      }
      const cls = lister.storageClass(pvc.spec?.storageClassName ?? '');
      const provisioner = cls?.provisioner ?? NO_PROVISIONER;
      const topo = cls?.allowedTopologies ?? [];
      const topoOk =
        topo.length === 0 ||
        topo.some((t) =>
          compileNodeSelectorTerm({
            matchExpressions: (t.matchLabelExpressions ?? []).map((e) => ({
              key: e.key ?? '',
              operator: 'In',
              values: e.values ?? [],
            })),
          })(node),
        );
      if (provisioner === NO_PROVISIONER || !topoOk) {
        return unresolvable("node(s) didn't find available persistent volumes to bind");
      }
      provisions.push(pvc);
    }
    return { staticBindings, provisions };
  }

  async function waitBound(claims: readonly PersistentVolumeClaim[]): Promise<Status | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = claims.filter(
        (c) => !claimFullyBound(lister.pvc(c.metadata.namespace ?? '', c.metadata.name ?? '')),
      );
      if (pending.length === 0) return undefined;
      if (Date.now() > deadline) {
        return errorStatus(new Error('timed out waiting for the condition'), 'binding volumes');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  return {
    name: PLUGIN.VolumeBinding,
    events: [
      { resource: 'PersistentVolumeClaim', action: '*' },
      { resource: 'PersistentVolume', action: '*' },
      { resource: 'StorageClass', action: '*' },
      { resource: 'CSINode', action: '*' },
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
    ],
    preFilter(state, pod) {
      if (pod.claims.length === 0) return { status: SKIP };
      const bound: PersistentVolumeClaim[] = [];
      const toBind: PersistentVolumeClaim[] = [];
      for (const key of pod.claims) {
        const [ns = '', name = ''] = key.split('/');
        const pvc = lister.pvc(ns, name);
        if (pvc === undefined) return { status: unresolvable(`persistentvolumeclaim "${name}" not found`) };
        if (pvc.metadata.deletionTimestamp !== undefined && pvc.metadata.deletionTimestamp !== null) {
          return { status: unresolvable(`persistentvolumeclaim "${name}" is being deleted`) };
        }
        if ((pvc.spec?.volumeName ?? '') !== '') {
          bound.push(pvc);
          continue;
        }
        const cls = lister.storageClass(pvc.spec?.storageClassName ?? '');
        if (cls?.volumeBindingMode !== 'WaitForFirstConsumer') {
          return { status: unresolvable('pod has unbound immediate PersistentVolumeClaims') };
        }
        toBind.push(pvc);
      }
      state.write(STATE, { bound, toBind, plans: new Map() } satisfies ClaimsState);
      return undefined;
    },
    filter(state, _pod, node) {
      const s = state.read<ClaimsState>(STATE);
      if (s === undefined) return undefined;
      const p = plan(s, node.name);
      if ('code' in p) return p;
      s.plans.set(node.name, p);
      return undefined;
    },
    reserve(state, pod, nodeName) {
      const s = state.read<ClaimsState>(STATE);
      if (s === undefined || s.toBind.length === 0) return undefined;
      const p = plan(s, nodeName);
      if ('code' in p) return p;
      s.plans.set(nodeName, p);
      for (const b of p.staticBindings) assumed.set(b.pv.metadata.name ?? '', pod.key);
      return undefined;
    },
    unreserve(state, _pod, nodeName) {
      const p = state.read<ClaimsState>(STATE)?.plans.get(nodeName);
      for (const b of p?.staticBindings ?? []) assumed.delete(b.pv.metadata.name ?? '');
    },
    async preBind(state, _pod, nodeName) {
      const s = state.read<ClaimsState>(STATE);
      if (s === undefined || s.toBind.length === 0) return undefined;
      const p = s.plans.get(nodeName);
      if (p === undefined) return { code: Code.Error, reasons: ['no volume binding decision for the node'] };
      try {
        for (const { pvc, pv } of p.staticBindings) {
          const cur = lister.pv(pv.metadata.name ?? '') ?? pv;
          await handle.api.updatePv({
            ...cur,
            metadata: {
              ...cur.metadata,
              annotations: {
                ...(cur.metadata.annotations ?? {}),
                'pv.kubernetes.io/bound-by-controller': 'yes',
              },
            },
            spec: {
              ...cur.spec,
              claimRef: {
                kind: 'PersistentVolumeClaim',
                apiVersion: 'v1',
                namespace: pvc.metadata.namespace ?? '',
                name: pvc.metadata.name ?? '',
                uid: pvc.metadata.uid ?? '',
                resourceVersion: pvc.metadata.resourceVersion ?? '',
              },
            },
          });
        }
        for (const pvc of p.provisions) {
          const cur = lister.pvc(pvc.metadata.namespace ?? '', pvc.metadata.name ?? '') ?? pvc;
          if (cur.metadata.annotations?.[SELECTED_NODE] === nodeName) continue;
          await handle.api.updatePvc({
            ...cur,
            metadata: {
              ...cur.metadata,
              annotations: { ...(cur.metadata.annotations ?? {}), [SELECTED_NODE]: nodeName },
            },
          });
        }
        return await waitBound(s.toBind);
      } catch (err) {
        return errorStatus(err, 'binding volumes');
      } finally {
        // The informer has the claimRef by now (or the binding failed): the PV is no longer ours to hold.
        for (const b of p.staticBindings) assumed.delete(b.pv.metadata.name ?? '');
      }
    },
  };
}
