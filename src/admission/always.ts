/** kube's deprecated AlwaysAdmit and AlwaysDeny plugins. */
import type { AdmissionPlugin } from './types.js';
import { admissionForbidden } from './forbidden.js';

/** AlwaysAdmit: does nothing. */
export function alwaysAdmit(): AdmissionPlugin {
  return { name: 'AlwaysAdmit', handles: () => false };
}

/** AlwaysDeny: refuses every write. */
export function alwaysDeny(): AdmissionPlugin {
  return {
    name: 'AlwaysDeny',
    handles: () => true,
    validate: (a) => {
      throw admissionForbidden(a, 'admission control is denying all modifications');
    },
  };
}
