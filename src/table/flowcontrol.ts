/** Printers of `flowcontrol.apiserver.k8s.io`: flow schemas and priority levels. */
import { AGE, column, columns, NAME } from './columns.js';
import { since } from './duration.js';
import { int, list, obj, str } from './fields.js';
import type { TablePrinter } from './index.js';

const FLOW_SCHEMA: TablePrinter = {
  columns: columns(
    NAME,
    column('PriorityLevel', 'string', 'Priority level the matching requests go to.'),
    column('MatchingPrecedence', 'string', 'Order in which schemas are matched (lower first).'),
    column('DistinguisherMethod', 'string', 'How requests are split into flows.'),
    AGE,
    column('MissingPL', 'string', 'Whether the referenced priority level is missing.'),
  ),
  cells(fs, now) {
    const spec = obj(fs['spec']);
    const method = spec['distinguisherMethod'];
    let missing = '?';
    for (const item of list(obj(fs['status'])['conditions'])) {
      const condition = obj(item);
      if (str(condition['type']) === 'Dangling') {
        missing = str(condition['status']);
        break;
      }
    }
    return [
      fs.metadata.name ?? '',
      str(obj(spec['priorityLevelConfiguration'])['name']),
      int(spec['matchingPrecedence']),
      method === undefined || method === null ? '<none>' : str(obj(method)['type']),
      since(fs.metadata.creationTimestamp, now),
      missing,
    ];
  },
};

const PRIORITY_LEVEL: TablePrinter = {
  columns: columns(
    NAME,
    column('Type', 'string', 'Whether the level is limited or exempt.'),
    column('NominalConcurrencyShares', 'string', 'Share of the server concurrency for the level.'),
    column('Queues', 'string', 'Number of queues.'),
    column('HandSize', 'string', 'Queues considered per request (shuffle sharding).'),
    column('QueueLengthLimit', 'string', 'Maximum requests waiting in one queue.'),
    AGE,
  ),
  cells(pl, now) {
    const spec = obj(pl['spec']);
    const limited = spec['limited'];
    let shares: unknown = '<none>';
    let queues: unknown = '<none>';
    let handSize: unknown = '<none>';
    let queueLengthLimit: unknown = '<none>';
    if (limited !== undefined && limited !== null) {
      shares = int(obj(limited)['nominalConcurrencyShares']);
      const queuing = obj(obj(limited)['limitResponse'])['queuing'];
      if (queuing !== undefined && queuing !== null) {
        queues = int(obj(queuing)['queues']);
        handSize = int(obj(queuing)['handSize']);
        queueLengthLimit = int(obj(queuing)['queueLengthLimit']);
      }
    }
    return [
      pl.metadata.name ?? '',
      str(spec['type']),
      shares,
      queues,
      handSize,
      queueLengthLimit,
      since(pl.metadata.creationTimestamp, now),
    ];
  },
};

/** `flowcontrol.apiserver.k8s.io` printers by resource. */
export const FLOWCONTROL_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  flowschemas: FLOW_SCHEMA,
  prioritylevelconfigurations: PRIORITY_LEVEL,
});
