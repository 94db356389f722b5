/**
 * The server's flow-control step, chosen as kube-apiserver chooses it: API Priority and Fairness
 * when `--enable-priority-and-fairness` (the default), with the server's concurrency limit the
 * sum of `--max-requests-inflight` and `--max-mutating-requests-inflight` and a queue wait of a
 * quarter of `--request-timeout`; otherwise the max-in-flight filter (inflight.ts).
 */
import type { FastifyRequest } from 'fastify';
import { FlowControl } from '../flowcontrol/dispatcher.js';
import { startFlowControlController } from '../flowcontrol/controller.js';
import { flowControlLimitMetrics, flowControlMetrics } from '../metrics/flowcontrol.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { InflightLimiter } from './inflight.js';
import type { ServerOptions } from './options.js';
import type { PipelineStep } from './pipeline.js';
import type { ControllerFactory } from './resources.js';

/** The step and, with APF, the controller that keeps its configuration. */
export interface FlowControlSetup {
  readonly step: PipelineStep;
  readonly controllers: readonly ControllerFactory[];
  /** The APF dispatcher (undefined with the max-in-flight filter). */
  readonly flowControl: FlowControl | undefined;
}

/** Builds the flow-control step of `options`. */
export function buildFlowControl(
  options: ServerOptions,
  metrics: MetricsRegistry,
  isLongRunning: (request: FastifyRequest) => boolean,
  logError: (message: string, err: unknown) => void,
): FlowControlSetup {
  if (options.flags.get('enable-priority-and-fairness') === false) {
    const limiter = new InflightLimiter({
      readOnly: options.maxRequestsInflight,
      mutating: options.maxMutatingRequestsInflight,
      isLongRunning,
    });
    return { step: limiter.admit, controllers: [], flowControl: undefined };
  }
  const observer = flowControlMetrics(metrics);
  const flowControl = new FlowControl({
    serverConcurrencyLimit: options.maxRequestsInflight + options.maxMutatingRequestsInflight,
    queueWaitMs: Math.max(1, Math.floor(options.requestTimeoutMs / 4)),
    isLongRunning,
    ...(observer === undefined ? {} : { observer }),
  });
  flowControlLimitMetrics(metrics, flowControl);
  return {
    step: flowControl.admit,
    controllers: [(ctx) => startFlowControlController(ctx, { flowControl, onError: logError })],
    flowControl,
  };
}
