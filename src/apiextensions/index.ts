/** CustomResourceDefinitions served live: see controller.ts. */
export {
  startCrdController,
  CRD_PREFIX,
  type CrdController,
  type CrdControllerOptions,
} from './controller.js';
export { readDefinition, servedTypes, type Definition } from './definition.js';
export { computeNames } from './names.js';
export { PublishedSchemas } from './published.js';
export { CrdRequests } from './requests.js';
