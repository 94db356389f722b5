/** Moved to `src/api/quota/usage.ts` (the quota controller shares it); re-exported here. */
export * from '../../api/quota/usage.js';
