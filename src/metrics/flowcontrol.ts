/**
 * kube-apiserver's API Priority and Fairness metrics (names, help and labels as kube's):
 * dispatched and rejected request counters, requests waiting in queues and executing, and each
 * level's nominal concurrency limit.
 */
import type { FlowControl, FlowControlObserver, RejectReason } from '../flowcontrol/dispatcher.js';
import { keptByPair, type MetricsRegistry } from './registry.js';

/**
 * Registers the APF families on `registry` and returns the observer that feeds them (undefined
 * when all of them are turned off).
 */
export function flowControlMetrics(registry: MetricsRegistry): FlowControlObserver | undefined {
  const dispatched = registry.counter(
    'apiserver_flowcontrol_dispatched_requests_total',
    'Number of requests executed by API Priority and Fairness subsystem',
    ['priority_level', 'flow_schema'],
  );
  const rejected = registry.counter(
    'apiserver_flowcontrol_rejected_requests_total',
    'Number of requests rejected by API Priority and Fairness subsystem',
    ['priority_level', 'flow_schema', 'reason'],
  );
  const inQueue = registry.gauge(
    'apiserver_flowcontrol_current_inqueue_requests',
    'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
    ['priority_level', 'flow_schema'],
  );
  const executing = registry.gauge(
    'apiserver_flowcontrol_current_executing_requests',
    'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
    ['priority_level', 'flow_schema'],
  );
  if (!registry.anyEnabled([dispatched, rejected, inQueue, executing])) return undefined;
  // Every request dispatches and executes: their series are kept per level and schema.
  const seriesOf = keptByPair((pl, fs) => ({
    dispatched: dispatched.child([pl, fs]),
    executing: executing.child([pl, fs]),
  }));
  return {
    dispatched: (pl, fs) => {
      seriesOf(pl, fs).dispatched.value += 1;
    },
    rejected: (pl, fs, reason: RejectReason) => rejected.inc([pl, fs, reason]),
    inQueue: (pl, fs, delta) => inQueue.inc([pl, fs], delta),
    executing: (pl, fs, delta) => {
      seriesOf(pl, fs).executing.value += delta;
    },
  };
}

/** `apiserver_flowcontrol_nominal_limit_seats`, read from `flowControl` at each scrape. */
export function flowControlLimitMetrics(registry: MetricsRegistry, flowControl: FlowControl): void {
  const seats = registry.gauge(
    'apiserver_flowcontrol_nominal_limit_seats',
    'Nominal number of execution seats configured for each priority level',
    ['priority_level'],
  );
  registry.collectOnScrape(() => {
    seats.reset();
    for (const [pl, limit] of flowControl.limits()) seats.set([pl], limit);
  });
}
