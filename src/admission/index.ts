export { AdmissionChain, EMPTY_CHAIN } from './chain.js';
export type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from './types.js';
