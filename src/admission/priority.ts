/**
 * kube's Priority plugin:
 * - a new pod's `spec.priorityClassName` is resolved to `spec.priority` (and the class's
 *   `preemptionPolicy`); without a name the `globalDefault` class applies, or priority 0;
 *   an unknown name is refused (`no PriorityClass with name x was found`), and so is a pod that
 *   states a different priority or preemption policy itself;
 * - only one PriorityClass may be `globalDefault`.
 * The system classes (`system-node-critical`, `system-cluster-critical`) are made at start by
 * {@link ensureSystemPriorityClasses}.
 */
import type { KubeObject } from '../api/object.js';
import type { AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { admissionForbidden } from './forbidden.js';
import { isCore, specOf } from './pod-spec.js';

/** kube's system priority classes. */
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; description: string }[] = [
  {
    name: 'system-node-critical',
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: 2000000000,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** Creates the system priority classes that do not exist (kube's bootstrap at start). */
export async function ensureSystemPriorityClasses(objects: AdmissionObjects): Promise<void> {
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    await objects.createIfMissing(KINDS.priorityClass, {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: c.name },
      value: c.value,
      description: c.description,
      preemptionPolicy: 'PreemptLowerPriority',
    });
  }
}

function defaultClass(classes: readonly KubeObject[]): KubeObject | undefined {
  // With several defaults (a race), kube takes the lowest value.
  return classes
    .filter((c) => c['globalDefault'] === true)
    .sort((x, y) => Number(x['value'] ?? 0) - Number(y['value'] ?? 0))[0];
}

export function priority(objects: AdmissionObjects): AdmissionPlugin {
  return {
    name: 'Priority',
    handles: (a) =>
      a.subresource === undefined &&
      ((isCore(a, 'Pod') && a.operation === 'CREATE') ||
        (a.type.group === 'scheduling.k8s.io' &&
          a.type.kind === 'PriorityClass' &&
          (a.operation === 'CREATE' || a.operation === 'UPDATE'))),
    admit: async (a) => {
      if (!isCore(a, 'Pod') || a.object === undefined) return;
      const spec = specOf(a.object, true);
      const name = typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : '';
      let value = 0;
      let preemption = 'PreemptLowerPriority';
      if (name === '') {
        const def = defaultClass(await objects.list(KINDS.priorityClass, undefined));
        if (def !== undefined) {
          spec['priorityClassName'] = def.metadata.name;
          value = Number(def['value'] ?? 0);
          if (typeof def['preemptionPolicy'] === 'string') preemption = def['preemptionPolicy'];
        }
      } else {
        const pc = await objects.get(KINDS.priorityClass, undefined, name);
        if (pc === undefined) throw admissionForbidden(a, `no PriorityClass with name ${name} was found`);
        value = Number(pc['value'] ?? 0);
        if (typeof pc['preemptionPolicy'] === 'string') preemption = pc['preemptionPolicy'];
      }
      if (typeof spec['priority'] === 'number' && spec['priority'] !== value) {
        throw admissionForbidden(
          a,
          `the integer value of priority (${spec['priority']}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
        );
      }
      spec['priority'] = value;
      if (typeof spec['preemptionPolicy'] === 'string' && spec['preemptionPolicy'] !== preemption) {
        throw admissionForbidden(
          a,
          `the string value of PreemptionPolicy (${spec['preemptionPolicy']}) must not be provided in pod spec; priority admission controller computed ${preemption} from the given PriorityClass name`,
        );
      }
      spec['preemptionPolicy'] = preemption;
    },
    validate: async (a) => {
      if (isCore(a, 'Pod') || a.object === undefined || a.object['globalDefault'] !== true) return;
      const other = (await objects.list(KINDS.priorityClass, undefined)).find(
        (c) => c['globalDefault'] === true && c.metadata.name !== a.object?.metadata.name,
      );
      if (other !== undefined) {
        throw admissionForbidden(
          a,
          `PriorityClass ${other.metadata.name ?? ''} is already marked as default. Only one default can exist`,
        );
      }
    },
  };
}
