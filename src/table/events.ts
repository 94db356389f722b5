/**
 * The event printer, for core `v1` Events and `events.k8s.io/v1` Events (the same stored object
 * under other field names). kube-apiserver converts both to one internal Event before printing, so
 * both resources print the same columns.
 */
import type { KubeObject } from '../api/object.js';
import { column, columns, wide } from './columns.js';
import { parseTime, since } from './duration.js';
import { int, obj, optInt, str, type Fields } from './fields.js';
import type { TablePrinter } from './index.js';

const EVENT_COLUMNS = columns(
  column('Last Seen', 'string', 'Time since the event was last observed.'),
  column('Type', 'string', 'Type of the event (Normal, Warning).'),
  column('Reason', 'string', 'Short machine-readable reason of the event.'),
  column('Object', 'string', 'Object the event is about, as kind/name.'),
  wide('Subobject', 'Field path within the object, e.g. a container.'),
  wide('Source', 'Component (and host) that reported the event.'),
  column('Message', 'string', 'Human-readable description of the event.'),
  wide('First Seen', 'Time since the event was first observed.'),
  wide('Count', 'Number of times the event occurred.'),
  column('Name', 'string', 'Name of the event object.', 1, 'name'),
);

/** The fields the printer reads, in the core `v1` vocabulary. */
interface EventView {
  readonly involved: Fields;
  readonly source: Fields;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly message: string;
  readonly firstTimestamp: unknown;
  readonly lastTimestamp: unknown;
  readonly eventTime: unknown;
  readonly count: number;
  readonly series: Fields | undefined;
}

function seriesOf(value: unknown): Fields | undefined {
  return value === undefined || value === null ? undefined : obj(value);
}

/** Reads a core `v1` Event. */
function coreView(event: KubeObject): EventView {
  return {
    involved: obj(event['involvedObject']),
    source: obj(event['source']),
    reportingController: str(event['reportingComponent']),
    reportingInstance: str(event['reportingInstance']),
    message: str(event['message']),
    firstTimestamp: event['firstTimestamp'],
    lastTimestamp: event['lastTimestamp'],
    eventTime: event['eventTime'],
    count: int(event['count']),
    series: seriesOf(event['series']),
  };
}

/** Reads an `events.k8s.io/v1` Event, mapping its names onto the core ones. */
function eventsView(event: KubeObject): EventView {
  return {
    involved: obj(event['regarding']),
    source: obj(event['deprecatedSource']),
    reportingController: str(event['reportingController']),
    reportingInstance: str(event['reportingInstance']),
    message: str(event['note']),
    firstTimestamp: event['deprecatedFirstTimestamp'],
    lastTimestamp: event['deprecatedLastTimestamp'],
    eventTime: event['eventTime'],
    count: int(event['deprecatedCount']),
    series: seriesOf(event['series']),
  };
}

/** SOURCE: component (or reporting controller), then `, host` (or reporting instance) when set. */
function formatSource(view: EventView): string {
  const component = str(view.source['component']) || view.reportingController;
  const host = str(view.source['host']) || view.reportingInstance;
  return host === '' ? component : `${component}, ${host}`;
}

function eventCells(view: EventView, event: KubeObject, now: Date): unknown[] {
  const first =
    parseTime(view.firstTimestamp) !== undefined
      ? since(view.firstTimestamp, now)
      : since(view.eventTime, now);
  let last = parseTime(view.lastTimestamp) !== undefined ? since(view.lastTimestamp, now) : first;
  let count = view.count;
  if (view.series !== undefined) {
    last = since(view.series['lastObservedTime'], now);
    count = optInt(view.series['count']) ?? 0;
  } else if (count === 0) {
    // Singleton events of the newer API carry no count.
    count = 1;
  }
  const kind = str(view.involved['kind']).toLowerCase();
  const involvedName = str(view.involved['name']);
  return [
    last,
    str(event['type']),
    str(event['reason']),
    involvedName === '' ? kind : `${kind}/${involvedName}`,
    str(view.involved['fieldPath']),
    formatSource(view),
    view.message.trim(),
    first,
    count,
    event.metadata.name ?? '',
  ];
}

/** Printer for core `events`. */
export const EVENT_PRINTER: TablePrinter = {
  columns: EVENT_COLUMNS,
  cells: (event, now) => eventCells(coreView(event), event, now),
};

/** Printer for `events.k8s.io` `events`. */
export const EVENTS_API_PRINTER: TablePrinter = {
  columns: EVENT_COLUMNS,
  cells: (event, now) => eventCells(eventsView(event), event, now),
};
