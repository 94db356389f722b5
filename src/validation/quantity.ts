/** Moved to `src/api/quantity.ts` (the controllers share it); re-exported for the server's modules. */
export * from '../api/quantity.js';
