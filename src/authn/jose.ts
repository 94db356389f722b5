/**
 * The one place `jose` (JWS/JWT and JWK) is loaded: on the first token signed, verified or
 * published, never at start-up (jose is not needed to serve until a bearer token arrives).
 */

/** The `jose` module, imported on the first call (the module system keeps it after that). */
export function loadJose(): Promise<typeof import('jose')> {
  return import('jose');
}
