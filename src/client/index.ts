/**
 * The Kubernetes client library: everything that acts on the API imports it from here.
 * See docs/client.md.
 */
export * from './config.js';
export * from './errors.js';
export * from './rate-limit.js';
export * from './resources.js';
export * from './transport.js';
export * from './client.js';
export * from './discovery.js';
export * from './watch.js';
export * from './workqueue.js';
export * from './reflector.js';
export * from './informer.js';
export * from './share.js';
export * from './pod-sharing.js';
export * from './leader-election.js';
export * from './events.js';
