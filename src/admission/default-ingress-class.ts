/**
 * kube's DefaultIngressClass: a new Ingress without `spec.ingressClassName` (and without the
 * `kubernetes.io/ingress.class` annotation) gets the default IngressClass's name (annotation
 * `ingressclass.kubernetes.io/is-default-class: "true"`).
 */
import type { AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { pickDefault } from './default-class.js';
import { specOf } from './pod-spec.js';

const IS_DEFAULT = 'ingressclass.kubernetes.io/is-default-class';
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

export function defaultIngressClass(objects: AdmissionObjects): AdmissionPlugin {
  return {
    name: 'DefaultIngressClass',
    handles: (a) =>
      a.type.group === 'networking.k8s.io' &&
      a.type.kind === 'Ingress' &&
      a.operation === 'CREATE' &&
      a.subresource === undefined,
    admit: async (a) => {
      const ing = a.object;
      if (ing === undefined) return;
      const spec = specOf(ing, true);
      if (typeof spec['ingressClassName'] === 'string') return;
      if (ing.metadata.annotations?.[CLASS_ANNOTATION] !== undefined) return;
      const classes = await objects.list(KINDS.ingressClass, undefined);
      const def = pickDefault(classes, (c) => c.metadata.annotations?.[IS_DEFAULT] === 'true');
      if (def !== undefined) spec['ingressClassName'] = def.metadata.name;
    },
  };
}
