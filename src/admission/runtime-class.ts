/**
 * kube's RuntimeClass plugin: a new pod naming a RuntimeClass must name one that exists
 * (`pod rejected: RuntimeClass "x" not found`); the class's `overhead.podFixed` becomes the
 * pod's `spec.overhead` (a different one is refused), and its `scheduling` node selector and
 * tolerations are merged into the pod (a conflicting node selector is refused).
 */
import { isJsonObject, jsonEqual, type JsonObject } from '../api/object.js';
import type { AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { admissionForbidden } from './forbidden.js';
import { isCore, objectList, specOf } from './pod-spec.js';

export function runtimeClass(objects: AdmissionObjects): AdmissionPlugin {
  return {
    name: 'RuntimeClass',
    handles: (a) => isCore(a, 'Pod') && a.operation === 'CREATE' && a.subresource === undefined,
    admit: async (a) => {
      if (a.object === undefined) return;
      const spec = specOf(a.object, true);
      const name = spec['runtimeClassName'];
      if (typeof name !== 'string' || name === '') return;
      const rc = await objects.get(KINDS.runtimeClass, undefined, name);
      if (rc === undefined) throw admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
      const overhead = isJsonObject(rc['overhead']) ? rc['overhead']['podFixed'] : undefined;
      if (isJsonObject(overhead)) {
        if (spec['overhead'] !== undefined && !jsonEqual(spec['overhead'], overhead)) {
          throw admissionForbidden(
            a,
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
          );
        }
        spec['overhead'] = structuredClone(overhead);
      }
      const scheduling = isJsonObject(rc['scheduling']) ? rc['scheduling'] : undefined;
      if (scheduling === undefined) return;
      const selector = isJsonObject(scheduling['nodeSelector']) ? scheduling['nodeSelector'] : {};
      const podSelector: JsonObject = isJsonObject(spec['nodeSelector']) ? { ...spec['nodeSelector'] } : {};
      for (const [k, v] of Object.entries(selector)) {
        if (podSelector[k] !== undefined && podSelector[k] !== v) {
          throw admissionForbidden(
            a,
            `pod rejected: conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${String(v)}; pod.spec.nodeSelector[${k}] = ${JSON.stringify(podSelector[k])}`,
          );
        }
        podSelector[k] = v;
      }
      if (Object.keys(podSelector).length > 0) spec['nodeSelector'] = podSelector;
      const tolerations = objectList(spec['tolerations']);
      for (const t of objectList(scheduling['tolerations'])) {
        if (!tolerations.some((x) => jsonEqual(x, t))) tolerations.push(structuredClone(t));
      }
      if (tolerations.length > 0) spec['tolerations'] = tolerations;
    },
    validate: (a) => {
      if (a.object === undefined) return;
      const spec = specOf(a.object);
      const name = spec['runtimeClassName'];
      if (spec['overhead'] !== undefined && (typeof name !== 'string' || name === '')) {
        throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass');
      }
    },
  };
}
