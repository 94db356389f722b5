/**
 * Annotation keys that the server and the controllers both read (kube keeps them in core/v1's
 * annotation key constants).
 */

/**
 * The annotation a node puts on the mirror pod of a static pod (its value: the static pod's
 * hash). The server refuses such a pod ephemeral containers and token mounts, and only nodes
 * may create one.
 */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** kubectl's client-side apply record: the configuration last applied to the object. */
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The DaemonSet annotation that carries kube's internal `spec.templateGeneration`. */
export const DAEMONSET_TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
