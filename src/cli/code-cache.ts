/**
 * The switch of the bundled build's code cache (see bundle-loader.ts), shared by the loader and the
 * build's warm-up (tools/bundle.ts).
 */

/** Set (to any value) to make the bundle's loader write the code cache when the process exits. */
export const CODE_CACHE_WRITE_ENV = 'CAPSTAN_WRITE_CODE_CACHE';
