/**
 * The in-tree plugin registry (name → factory) and kube's default profile: the plugins of the
 * `multiPoint` extension point with their score weights.
 */
import type { PluginFactory } from '../framework/types.js';
import type { PluginRef } from '../config.js';
import { balancedAllocation } from './balanced-allocation.js';
import { defaultBinder } from './default-binder.js';
import { defaultPreemption } from './default-preemption.js';
import { imageLocality } from './image-locality.js';
import { interPodAffinity } from './inter-pod-affinity.js';
import { PLUGIN } from './names.js';
import { nodeAffinity } from './node-affinity.js';
import { nodeResourcesFit } from './node-resources-fit.js';
import { podTopologySpread } from './pod-topology-spread.js';
import { nodeName, nodePorts, nodeUnschedulable, prioritySort, schedulingGates } from './simple.js';
import { taintToleration } from './taint-toleration.js';
import { volumeBinding } from './volume-binding.js';
import { volumeRestrictions } from './volume-restrictions.js';
import { nodeVolumeLimits } from './node-volume-limits.js';
import { volumeZone } from './volume-zone.js';

/** Every plugin Capstan's scheduler knows, by name. */
export function inTreeRegistry(): ReadonlyMap<string, PluginFactory> {
  return new Map<string, PluginFactory>([
    [PLUGIN.PrioritySort, () => prioritySort()],
    [PLUGIN.SchedulingGates, () => schedulingGates()],
    [PLUGIN.NodeUnschedulable, () => nodeUnschedulable()],
    [PLUGIN.NodeName, () => nodeName()],
    [PLUGIN.TaintToleration, () => taintToleration()],
    [PLUGIN.NodeAffinity, (args) => nodeAffinity(args)],
    [PLUGIN.NodePorts, () => nodePorts()],
    [PLUGIN.NodeResourcesFit, (args) => nodeResourcesFit(args)],
    [PLUGIN.VolumeRestrictions, volumeRestrictions],
    [PLUGIN.NodeVolumeLimits, nodeVolumeLimits],
    [PLUGIN.VolumeBinding, volumeBinding],
    [PLUGIN.VolumeZone, volumeZone],
    [PLUGIN.PodTopologySpread, podTopologySpread],
    [PLUGIN.InterPodAffinity, interPodAffinity],
    [PLUGIN.DefaultPreemption, defaultPreemption],
    [PLUGIN.NodeResourcesBalancedAllocation, (args) => balancedAllocation(args)],
    [PLUGIN.ImageLocality, imageLocality],
    [PLUGIN.DefaultBinder, defaultBinder],
  ]);
}

/** kube v1.33's default `multiPoint` plugins, in order, with score weights. */
export const DEFAULT_MULTIPOINT: readonly PluginRef[] = [
  { name: PLUGIN.SchedulingGates },
  { name: PLUGIN.PrioritySort },
  { name: PLUGIN.NodeUnschedulable },
  { name: PLUGIN.NodeName },
  { name: PLUGIN.TaintToleration, weight: 3 },
  { name: PLUGIN.NodeAffinity, weight: 2 },
  { name: PLUGIN.NodePorts },
  { name: PLUGIN.NodeResourcesFit, weight: 1 },
  { name: PLUGIN.VolumeRestrictions },
  { name: PLUGIN.NodeVolumeLimits },
  { name: PLUGIN.VolumeBinding },
  { name: PLUGIN.VolumeZone },
  { name: PLUGIN.PodTopologySpread, weight: 2 },
  { name: PLUGIN.InterPodAffinity, weight: 2 },
  { name: PLUGIN.DefaultPreemption },
  { name: PLUGIN.NodeResourcesBalancedAllocation, weight: 1 },
  { name: PLUGIN.ImageLocality, weight: 1 },
  { name: PLUGIN.DefaultBinder },
];
