/** Per-kind behaviour behind one interface: see strategy.ts. */
export type { KindStrategy } from './strategy.js';
export { KindStrategies, type KindRef } from './strategies.js';
export { BuiltInStrategy } from './builtin.js';
export { NAMESPACE_FINALIZER } from './deletion.js';
