/**
 * Builds the authorization of one server from its options: the authorizer chain of
 * `--authorization-mode` or `--authorization-config` (in order; the file is reloaded on change), the RBAC index and bootstrap policy when RBAC is on, the
 * review endpoints, and the pipeline steps (impersonation, authorization). Explicit wiring: the
 * app calls {@link buildAuthorization} and runs {@link AuthorizationSetup.start} and `stop` with
 * its own lifecycle.
 */
import { readFileSync } from 'node:fs';
import type { Store } from '../../storage/interface.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  loadAuthorizationConfig,
  type AuthorizationConfig,
  type AuthorizerEntry,
  type WebhookSettings,
} from './authorization-config.js';
import { alwaysAllow, alwaysDeny, AuthorizerChain, type Authorizer } from './authorizer.js';
import { authorizationStep } from './authorization-step.js';
import { bootstrapPolicy } from './bootstrap-policy.js';
import { AbacAuthorizer } from './abac.js';
import { escalationStep, type ProtobufDecoder } from './escalation.js';
import { WebhookAuthorizer, type WebhookOptions } from './webhook.js';
import { impersonationStep } from './impersonation.js';
import { NodeAuthorizer } from './node-authorizer.js';
import { NodeGraph } from './node-graph.js';
import { RbacAuthorizer } from './rbac-authorizer.js';
import type { PolicyRule } from './rbac-rules.js';
import { RbacIndex } from './rbac-index.js';
import { reconcilePolicy } from './reconcile.js';
import { reviewEndpoints } from './reviews.js';

/** A request-pipeline step (the server's pipeline runs it): throw an ApiError to reject. */
export type PipelineStep = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** What the authorization is built from. */
export interface AuthorizationDeps {
  /** `--authorization-mode`, in order (ignored when `config` is given). */
  readonly modes: readonly string[];
  /** `--authorization-config`, loaded: its authorizers replace `modes`. */
  readonly config?: AuthorizationConfigSource;
  /** The handlers' store (JSON values under `--etcd-prefix`). */
  readonly store: Store;
  readonly now: () => Date;
  readonly logError: (message: string, err?: unknown) => void;
  /** Notable events that are not errors (a reloaded configuration). */
  readonly logWarning?: (message: string) => void;
  /** `--authorization-policy-file` (ABAC). */
  readonly policyFile?: string;
  /** The webhook's settings (Webhook through `--authorization-mode`). */
  readonly webhook?: WebhookOptions;
  /** Further authorizers by mode name (Node, ABAC, Webhook), built by their own modules. */
  readonly extraAuthorizers?: ReadonlyMap<string, Authorizer>;
  /** Test hook: plant an RBAC evaluation bug (see {@link RbacAuthorizer}). */
  readonly plantedBug?: string;
  /** Decodes protobuf bodies of RBAC writes for the escalation check. */
  readonly decodeProtobuf?: ProtobufDecoder;
}

/** kube-apiserver looks at `--authorization-config` for changes once a minute. */
export const AUTHORIZATION_CONFIG_RELOAD_MS = 60_000;

/** `--authorization-config`: the file, its loaded content, and how often to look for changes. */
export interface AuthorizationConfigSource {
  readonly path: string;
  readonly config: AuthorizationConfig;
  /** Reload check interval (kube-apiserver: one minute); 0 never reloads. */
  readonly reloadIntervalMs: number;
}

/** The built authorization. */
export interface AuthorizationSetup {
  readonly chain: AuthorizerChain;
  /** The RBAC index (RBAC mode only). */
  readonly rbacIndex: RbacIndex | undefined;
  readonly rbac: RbacAuthorizer | undefined;
  /** Pipeline steps; `authorization` is unset under AlwaysAllow alone (it would cost for nothing). */
  readonly impersonation: PipelineStep;
  readonly authorization: PipelineStep | undefined;
  /** RBAC's escalation check, a preHandler (RBAC mode only). */
  readonly escalation: PipelineStep | undefined;
  /** The review endpoints. */
  readonly endpoints: ReadonlyMap<string, CustomEndpoint>;
  /** Starts the index and reconciles the bootstrap policy; calls `onBootstrapped` when done. */
  start(onBootstrapped: () => void): Promise<void>;
  stop(): void;
}

/** The entries of `--authorization-mode` (each mode's name is its type in lower case). */
function entriesOfModes(modes: readonly string[]): AuthorizerEntry[] {
  return modes.map((mode) => ({ type: mode as AuthorizerEntry['type'], name: mode.toLowerCase() }));
}

/** The webhook options of one `--authorization-config` entry. */
function webhookOptions(w: WebhookSettings): WebhookOptions {
  return {
    configFile: w.connectionInfo.type === 'KubeConfigFile' ? w.connectionInfo.kubeConfigFile : '',
    inCluster: w.connectionInfo.type === 'InClusterConfig',
    version: w.subjectAccessReviewVersion,
    authorizedTtlMs: w.authorizedTtlMs,
    unauthorizedTtlMs: w.unauthorizedTtlMs,
    cacheAuthorized: w.cacheAuthorizedRequests,
    cacheUnauthorized: w.cacheUnauthorizedRequests,
    failurePolicy: w.failurePolicy,
    timeoutMs: w.timeoutMs,
    ...(w.matchConditions === undefined ? {} : { matchConditions: w.matchConditions }),
  };
}

/** Builds the chain and what comes with it; nothing runs before `start`. */
export function buildAuthorization(deps: AuthorizationDeps): AuthorizationSetup {
  let index: RbacIndex | undefined;
  let rbac: RbacAuthorizer | undefined;
  let graph: NodeGraph | undefined;
  let node: NodeAuthorizer | undefined;
  let abac: AbacAuthorizer | undefined;
  const entries = deps.config === undefined ? entriesOfModes(deps.modes) : deps.config.config.authorizers;
  /** The authorizer of one entry; RBAC, Node and ABAC are built once and shared by reloads. */
  const authorizerOf = (entry: AuthorizerEntry, reloading: boolean): Authorizer => {
    const refuse = (): never => {
      throw new Error(`authorizer ${entry.type} was not enabled at start; restart the server to add it`);
    };
    switch (entry.type) {
      case 'AlwaysAllow':
        return alwaysAllow;
      case 'AlwaysDeny':
        return alwaysDeny;
      case 'Node': {
        if (node !== undefined) return node;
        if (reloading) return refuse();
        graph = new NodeGraph(deps.store, (err) => deps.logError('Node authorizer: pods watch failed', err));
        const nodeRole = bootstrapPolicy().find(
          (p) => p.resource === 'clusterroles' && p.name === 'system:node',
        );
        node = new NodeAuthorizer(graph, (nodeRole?.object['rules'] as PolicyRule[] | undefined) ?? []);
        return node;
      }
      case 'ABAC':
        if (abac !== undefined) return abac;
        if (reloading) return refuse();
        if (deps.policyFile === undefined || deps.policyFile === '') {
          throw new Error('authorization-mode ABAC requires --authorization-policy-file');
        }
        abac = AbacAuthorizer.fromFile(deps.policyFile);
        return abac;
      case 'Webhook':
        if (entry.webhook !== undefined) return new WebhookAuthorizer(webhookOptions(entry.webhook));
        if (deps.webhook === undefined || deps.webhook.configFile === '') {
          throw new Error('authorization-mode Webhook requires --authorization-webhook-config-file');
        }
        return new WebhookAuthorizer(deps.webhook);
      case 'RBAC':
        if (rbac !== undefined) return rbac;
        if (reloading) return refuse();
        index = new RbacIndex(deps.store, (err) => deps.logError('RBAC index: storage watch failed', err));
        rbac = new RbacAuthorizer(
          index,
          deps.plantedBug === undefined ? {} : { plantedBug: deps.plantedBug },
        );
        return rbac;
      default: {
        const a = deps.extraAuthorizers?.get(entry.type);
        if (a === undefined) throw new Error(`authorization mode ${String(entry.type)} is not available`);
        return a;
      }
    }
  };
  const authorizers = entries.map((e) => authorizerOf(e, false));
  const chain = new AuthorizerChain(authorizers);
  // Under AlwaysAllow alone the step would cost for nothing (a reloadable file keeps it).
  const onlyAllow = deps.config === undefined && deps.modes.every((m) => m === 'AlwaysAllow');
  let reloader: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  return {
    chain,
    rbacIndex: index,
    rbac,
    impersonation: impersonationStep(chain),
    authorization: onlyAllow ? undefined : authorizationStep(chain),
    escalation:
      rbac === undefined || index === undefined
        ? undefined
        : escalationStep(chain, rbac, index, deps.decodeProtobuf),
    endpoints: reviewEndpoints(chain),
    async start(onBootstrapped) {
      graph?.start();
      const source = deps.config;
      if (source !== undefined && source.reloadIntervalMs > 0) {
        reloader = watchConfig(
          source,
          (config) => chain.replace(config.authorizers.map((e) => authorizerOf(e, true))),
          deps,
        );
      }
      if (index === undefined) return;
      index.start();
      const policy = bootstrapPolicy();
      for (let attempt = 0; !stopped; attempt++) {
        try {
          await reconcilePolicy(deps.store, policy, deps.now);
          onBootstrapped();
          return;
        } catch (err) {
          deps.logError('rbac/bootstrap-roles: reconciling the bootstrap policy failed; retrying', err);
          await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 200 * 2 ** attempt)));
        }
      }
    },
    stop() {
      stopped = true;
      if (reloader !== undefined) clearInterval(reloader);
      graph?.close();
      index?.close();
    },
  };
}

/**
 * Looks at the file every interval; a changed, valid file whose authorizers can be built replaces
 * the chain, anything else keeps the chain in use and is logged (kube-apiserver's reload).
 */
function watchConfig(
  source: AuthorizationConfigSource,
  apply: (config: AuthorizationConfig) => void,
  deps: AuthorizationDeps,
): ReturnType<typeof setInterval> {
  let last = readOrEmpty(source.path);
  const timer = setInterval(() => {
    const text = readOrEmpty(source.path);
    if (text === last) return;
    last = text;
    try {
      apply(loadAuthorizationConfig(source.path));
      deps.logWarning?.(`--authorization-config ${source.path}: reloaded`);
    } catch (err) {
      deps.logError(
        `--authorization-config ${source.path}: reload failed; the previous configuration stays in use`,
        err,
      );
    }
  }, source.reloadIntervalMs);
  timer.unref();
  return timer;
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
