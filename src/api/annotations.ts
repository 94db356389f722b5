/**
 * Annotation keys that the server and the controllers both read (kube keeps them in core/v1's
 * annotation key constants).
 */

/** kubectl's client-side apply record: the configuration last applied to the object. */
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
