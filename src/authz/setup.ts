/**
 * Builds the authorization of one server from its options: the authorizer chain of
 * `--authorization-mode` (in order), the RBAC index and bootstrap policy when RBAC is on, the
 * review endpoints, and the pipeline steps (impersonation, authorization). Explicit wiring: the
 * app calls {@link buildAuthorization} and runs {@link AuthorizationSetup.start} and `stop` with
 * its own lifecycle.
 */
import type { Store } from '../../storage/interface.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AggregationController } from './aggregation.js';
import { alwaysAllow, alwaysDeny, AuthorizerChain, type Authorizer } from './authorizer.js';
import { authorizationStep } from './authorization-step.js';
import { bootstrapPolicy } from './bootstrap-policy.js';
import { AbacAuthorizer } from './abac.js';
import { escalationStep } from './escalation.js';
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
  /** `--authorization-mode`, in order. */
  readonly modes: readonly string[];
  /** The handlers' store (JSON values under `--etcd-prefix`). */
  readonly store: Store;
  readonly now: () => Date;
  readonly logError: (message: string, err?: unknown) => void;
  /** `--authorization-policy-file` (ABAC). */
  readonly policyFile?: string;
  /** The webhook's settings (Webhook). */
  readonly webhook?: WebhookOptions;
  /** Further authorizers by mode name (Node, ABAC, Webhook), built by their own modules. */
  readonly extraAuthorizers?: ReadonlyMap<string, Authorizer>;
  /** Test hook: plant an RBAC evaluation bug (see {@link RbacAuthorizer}). */
  readonly plantedBug?: string;
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

/** Builds the chain and what comes with it; nothing runs before `start`. */
export function buildAuthorization(deps: AuthorizationDeps): AuthorizationSetup {
  let index: RbacIndex | undefined;
  let rbac: RbacAuthorizer | undefined;
  let graph: NodeGraph | undefined;
  const authorizers: Authorizer[] = [];
  for (const mode of deps.modes) {
    switch (mode) {
      case 'AlwaysAllow':
        authorizers.push(alwaysAllow);
        break;
      case 'AlwaysDeny':
        authorizers.push(alwaysDeny);
        break;
      case 'Node': {
        graph = new NodeGraph(deps.store, (err) => deps.logError('Node authorizer: pods watch failed', err));
        const nodeRole = bootstrapPolicy().find(
          (p) => p.resource === 'clusterroles' && p.name === 'system:node',
        );
        authorizers.push(
          new NodeAuthorizer(graph, (nodeRole?.object['rules'] as PolicyRule[] | undefined) ?? []),
        );
        break;
      }
      case 'ABAC':
        if (deps.policyFile === undefined || deps.policyFile === '') {
          throw new Error('authorization-mode ABAC requires --authorization-policy-file');
        }
        authorizers.push(AbacAuthorizer.fromFile(deps.policyFile));
        break;
      case 'Webhook':
        if (deps.webhook === undefined || deps.webhook.configFile === '') {
          throw new Error('authorization-mode Webhook requires --authorization-webhook-config-file');
        }
        authorizers.push(new WebhookAuthorizer(deps.webhook));
        break;
      case 'RBAC':
        index = new RbacIndex(deps.store, (err) => deps.logError('RBAC index: storage watch failed', err));
        rbac = new RbacAuthorizer(
          index,
          deps.plantedBug === undefined ? {} : { plantedBug: deps.plantedBug },
        );
        authorizers.push(rbac);
        break;
      default: {
        const a = deps.extraAuthorizers?.get(mode);
        if (a === undefined) throw new Error(`authorization mode ${mode} is not available`);
        authorizers.push(a);
      }
    }
  }
  const chain = new AuthorizerChain(authorizers);
  const onlyAllow = deps.modes.every((m) => m === 'AlwaysAllow');
  let aggregation: AggregationController | undefined;
  let stopped = false;
  return {
    chain,
    rbacIndex: index,
    rbac,
    impersonation: impersonationStep(chain),
    authorization: onlyAllow ? undefined : authorizationStep(chain),
    escalation: rbac === undefined || index === undefined ? undefined : escalationStep(chain, rbac, index),
    endpoints: reviewEndpoints(chain),
    async start(onBootstrapped) {
      graph?.start();
      if (index === undefined) return;
      index.start();
      aggregation = new AggregationController(index, deps.store, deps.logError);
      const policy = bootstrapPolicy();
      for (let attempt = 0; !stopped; attempt++) {
        try {
          await reconcilePolicy(deps.store, policy, deps.now);
          aggregation.start();
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
      graph?.close();
      aggregation?.stop();
      index?.close();
    },
  };
}
