/**
 * The storage engine's public surface: the contract, its errors, continue tokens, and the
 * backends. Nothing here knows about HTTP or Kubernetes kinds.
 */
export type * from './interface.js';
export * from './errors.js';
export { ContinueTokens, compareKeys, spanContains, type ContinuePosition } from './continue-token.js';
