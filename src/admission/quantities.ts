/** Moved to `src/api/quota/quantities.ts` (the quota controller shares it); re-exported here. */
export * from '../api/quota/quantities.js';
