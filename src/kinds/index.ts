/** Per-kind behaviour behind one interface: see strategy.ts. */
export type { KindStrategy } from './strategy.js';
export { KindStrategies, type KindRef } from './strategies.js';
export { BuiltInStrategy } from './builtin.js';
export { CustomStrategy, type CustomKind, type CustomVersion, type ScalePaths } from './custom.js';
export type { ScaleMapping } from './strategy.js';
export { NAMESPACE_FINALIZER } from './deletion.js';
export { CRD_CLEANUP_FINALIZER } from './crd-deletion.js';
