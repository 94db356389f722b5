/**
 * batch/v1 Job and CronJob (`pkg/apis/batch/validation`).
 */
import {
  IMMUTABLE,
  invalid,
  NEGATIVE,
  notSupported,
  required,
  tooLongChars,
  tooMany,
  type FieldError,
} from './field-error.js';
import { byteLength, isDNS1123Label, isDNS1123Subdomain } from './formats.js';
import {
  has,
  isObject,
  num,
  obj,
  objects,
  optStr,
  semanticEqual,
  str,
  stringMap,
  type JsonObject,
} from './json.js';
import { selectorMatches, validateLabelSelector } from './meta.js';
import { child, index } from './path.js';
import { validatePodTemplateSpec } from './core/pod-spec.js';
import { parseSchedule, ScheduleError } from '../api/cron-schedule.js';

/** robfig/cron's parse error for a schedule (kube's message), or undefined when it parses. */
function scheduleError(schedule: string): string | undefined {
  try {
    parseSchedule(schedule);
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleError) return err.message;
    throw err;
  }
}

/** Labels kube's Job strategy puts on generated selectors and pod templates. */
export const JOB_LABELS = {
  controllerUid: 'batch.kubernetes.io/controller-uid',
  jobName: 'batch.kubernetes.io/job-name',
  legacyControllerUid: 'controller-uid',
  legacyJobName: 'job-name',
} as const;

function nonNegative(spec: JsonObject, k: string, path: string, errs: FieldError[]): void {
  const v = num(spec, k);
  if (v !== undefined && v < 0) errs.push(invalid(child(path, k), v, NEGATIVE));
}

function validatePodFailurePolicy(spec: JsonObject, path: string, errs: FieldError[]): void {
  const rules = objects(obj(spec, 'podFailurePolicy'), 'rules');
  const rp = child(path, 'rules');
  if (rules.length > 20) errs.push(tooMany(rp, rules.length, 20));
  const actions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
  rules.forEach((rule, i) => {
    const p = index(rp, i);
    const action = str(rule, 'action');
    if (action === '') errs.push(required(child(p, 'action')));
    else if (!actions.includes(action)) errs.push(notSupported(child(p, 'action'), action, actions));
    const exit = obj(rule, 'onExitCodes');
    const conditions = objects(rule, 'onPodConditions');
    if (exit !== undefined && conditions.length > 0) {
      errs.push(invalid(p, rule, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    } else if (exit === undefined && conditions.length === 0) {
      errs.push(invalid(p, rule, 'specifying one of OnExitCodes and OnPodConditions is required'));
    }
    if (exit !== undefined) {
      const op = str(exit, 'operator');
      if (op !== 'In' && op !== 'NotIn')
        errs.push(notSupported(child(p, 'onExitCodes', 'operator'), op, ['In', 'NotIn']));
      if ((exit['values'] as unknown[] | undefined)?.length === 0 || !Array.isArray(exit['values'])) {
        errs.push(required(child(p, 'onExitCodes', 'values'), 'at least one value is required'));
      }
    }
    conditions.forEach((c, j) => {
      const cp = index(child(p, 'onPodConditions'), j);
      const status = str(c, 'status');
      if (!['False', 'True', 'Unknown'].includes(status))
        errs.push(notSupported(child(cp, 'status'), status, ['False', 'True', 'Unknown']));
      if (str(c, 'type') === '') errs.push(required(child(cp, 'type')));
    });
  });
}

/** `validateJobSpec`: counts, completion mode, policies, and the pod template. */
function validateJobSpecBody(spec: JsonObject, path: string, errs: FieldError[]): void {
  for (const k of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ]) {
    nonNegative(spec, k, path, errs);
  }
  if (has(spec, 'maxFailedIndexes') && !has(spec, 'backoffLimitPerIndex')) {
    errs.push(required(child(path, 'backoffLimitPerIndex'), 'when maxFailedIndexes is specified'));
  }
  const managedBy = optStr(spec, 'managedBy');
  if (managedBy !== undefined) {
    const [host = '', rest = ''] = managedBy.split(/\/(.*)/s);
    if (managedBy === '') errs.push(required(child(path, 'managedBy')));
    else if (!managedBy.includes('/') || host === '' || rest === '') {
      errs.push(
        invalid(
          child(path, 'managedBy'),
          managedBy,
          'must be a domain-prefixed path (such as "acme.io/foo")',
        ),
      );
    } else {
      for (const msg of isDNS1123Subdomain(host)) errs.push(invalid(child(path, 'managedBy'), host, msg));
    }
    if (byteLength(managedBy) > 63) errs.push(tooLongChars(child(path, 'managedBy'), 63));
  }
  const mode = spec['completionMode'];
  const indexed = mode === 'Indexed';
  if (mode !== undefined && mode !== null) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed')
      errs.push(notSupported(child(path, 'completionMode'), mode, ['NonIndexed', 'Indexed']));
    if (indexed) {
      if (!has(spec, 'completions'))
        errs.push(required(child(path, 'completions'), 'when completion mode is Indexed'));
      const parallelism = num(spec, 'parallelism') ?? 0;
      if (parallelism > 100000)
        errs.push(
          invalid(
            child(path, 'parallelism'),
            parallelism,
            'must be less than or equal to 100000 when completion mode is Indexed',
          ),
        );
      const mfi = num(spec, 'maxFailedIndexes');
      const completions = num(spec, 'completions');
      if (mfi !== undefined && completions !== undefined && mfi > completions) {
        errs.push(invalid(child(path, 'maxFailedIndexes'), mfi, 'must be less than or equal to completions'));
      }
    }
  }
  if (!indexed) {
    for (const k of ['backoffLimitPerIndex', 'maxFailedIndexes']) {
      if (has(spec, k)) errs.push(invalid(child(path, k), spec[k], 'requires indexed completion mode'));
    }
    if (has(spec, 'successPolicy'))
      errs.push(
        invalid(child(path, 'successPolicy'), spec['successPolicy'], 'requires indexed completion mode'),
      );
  }
  if (has(spec, 'podFailurePolicy')) validatePodFailurePolicy(spec, child(path, 'podFailurePolicy'), errs);
  const replacement = spec['podReplacementPolicy'];
  if (replacement !== undefined && replacement !== null) {
    if (replacement !== 'Failed' && replacement !== 'TerminatingOrFailed') {
      errs.push(
        notSupported(child(path, 'podReplacementPolicy'), replacement, ['Failed', 'TerminatingOrFailed']),
      );
    } else if (has(spec, 'podFailurePolicy') && replacement !== 'Failed') {
      errs.push(notSupported(child(path, 'podReplacementPolicy'), replacement, ['Failed']));
    }
  }
  const template = obj(spec, 'template') ?? {};
  validatePodTemplateSpec(template, child(path, 'template'), errs);
  const restart = str(obj(template, 'spec'), 'restartPolicy');
  const rpath = child(path, 'template', 'spec', 'restartPolicy');
  if (restart === 'Always' || restart === '')
    errs.push(required(rpath, 'valid values: "OnFailure", "Never"'));
  else if (restart !== 'OnFailure' && restart !== 'Never')
    errs.push(notSupported(rpath, restart, ['OnFailure', 'Never']));
  else if (has(spec, 'podFailurePolicy') && restart !== 'Never') {
    errs.push(invalid(rpath, restart, 'only "Never" is supported when podFailurePolicy is specified'));
  }
}

function validateGeneratedSelector(job: JsonObject, errs: FieldError[]): void {
  const spec = obj(job, 'spec') ?? {};
  if (spec['manualSelector'] === true || !isObject(spec['selector'])) return;
  const meta = obj(job, 'metadata');
  const uid = str(meta, 'uid');
  const name = str(meta, 'name');
  if (uid === '') errs.push(required('metadata.uid'));
  const labels = stringMap(obj(obj(spec, 'template'), 'metadata'), 'labels');
  const expect: [string, string][] = [
    [JOB_LABELS.legacyControllerUid, uid],
    [JOB_LABELS.legacyJobName, name],
    [JOB_LABELS.controllerUid, uid],
    [JOB_LABELS.jobName, name],
  ];
  for (const [k, v] of expect) {
    const actual = labels.get(k);
    if (actual === undefined) errs.push(required(`spec.template.metadata.labels[${k}]`, `must be '${v}'`));
    else if (actual !== v)
      errs.push(invalid(`spec.template.metadata.labels[${k}]`, Object.fromEntries(labels), `must be '${v}'`));
  }
  if (!selectorMatches(spec['selector'], new Map(expect))) {
    errs.push(invalid('spec.selector', spec['selector'], '`selector` not auto-generated'));
  }
}

/** A Job (create, and the new object of an update). */
export function validateJob(job: JsonObject, errs: FieldError[]): void {
  validateGeneratedSelector(job, errs);
  const spec = obj(job, 'spec') ?? {};
  validateJobSpecBody(spec, 'spec', errs);
  const selector = spec['selector'];
  if (!isObject(selector)) errs.push(required('spec.selector'));
  else errs.push(...validateLabelSelector(selector, 'spec.selector'));
  const labels = stringMap(obj(obj(spec, 'template'), 'metadata'), 'labels');
  if (!isObject(selector) || !selectorMatches(selector, labels)) {
    errs.push(
      invalid(
        'spec.template.metadata.labels',
        Object.fromEntries(labels),
        '`selector` does not match template `labels`',
      ),
    );
  }
  const completions = num(spec, 'completions');
  if (spec['completionMode'] === 'Indexed' && completions !== undefined && completions > 0) {
    const name = str(obj(job, 'metadata'), 'name');
    const host = `${name}-${completions - 1}`;
    if (isDNS1123Label(host).length > 0) {
      errs.push(
        invalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${host}`),
      );
    }
  }
}

/**
 * A Job update: selector, completion mode and policies are immutable; the pod template is
 * immutable too, except its scheduling directives while the Job is suspended and not started.
 */
export function validateJobUpdate(job: JsonObject, old: JsonObject, errs: FieldError[]): void {
  validateJob(job, errs);
  const spec = obj(job, 'spec') ?? {};
  const oldSpec = obj(old, 'spec') ?? {};
  const indexed = spec['completionMode'] === 'Indexed';
  if (!semanticEqual(spec['completions'], oldSpec['completions'])) {
    if (!indexed) errs.push(invalid('spec.completions', spec['completions'] ?? null, IMMUTABLE));
    else if (has(spec, 'completions') && spec['completions'] !== spec['parallelism']) {
      errs.push(
        invalid(
          'spec.completions',
          spec['completions'],
          'can only be modified in tandem with spec.parallelism',
        ),
      );
    }
  }
  for (const k of [
    'selector',
    'completionMode',
    'podFailurePolicy',
    'backoffLimitPerIndex',
    'managedBy',
    'successPolicy',
  ]) {
    if (!semanticEqual(spec[k], oldSpec[k])) errs.push(invalid(child('spec', k), spec[k] ?? null, IMMUTABLE));
  }
  const template = obj(spec, 'template') ?? {};
  let oldTemplate = obj(oldSpec, 'template') ?? {};
  const startTime = obj(old, 'status')?.['startTime'];
  if (oldSpec['suspend'] === true && (startTime === undefined || startTime === null)) {
    // Scheduling directives may change until a suspended Job first starts.
    const tspec = obj(template, 'spec') ?? {};
    const otspec = { ...(obj(oldTemplate, 'spec') ?? {}) };
    for (const k of ['nodeSelector', 'tolerations', 'schedulingGates']) otspec[k] = tspec[k];
    const affinity = obj(tspec, 'affinity');
    const oldAffinity = obj(otspec, 'affinity');
    if (affinity !== undefined || oldAffinity !== undefined) {
      const merged: JsonObject = { ...(oldAffinity ?? {}), nodeAffinity: affinity?.['nodeAffinity'] };
      otspec['affinity'] =
        affinity === undefined && Object.keys(merged).every((k) => merged[k] === undefined)
          ? undefined
          : merged;
    }
    const meta = obj(template, 'metadata') ?? {};
    oldTemplate = {
      ...oldTemplate,
      spec: otspec,
      metadata: {
        ...(obj(oldTemplate, 'metadata') ?? {}),
        labels: meta['labels'],
        annotations: meta['annotations'],
      },
    };
  }
  if (!semanticEqual(template, oldTemplate)) errs.push(invalid('spec.template', template, IMMUTABLE));
}

const CONCURRENCY = ['Allow', 'Forbid', 'Replace'];

/** A CronJob (create when `old` is undefined, update otherwise). */
export function validateCronJob(cj: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(cj, 'spec') ?? {};
  const oldSpec = old === undefined ? undefined : (obj(old, 'spec') ?? {});
  const schedule = str(spec, 'schedule');
  if (schedule === '') {
    errs.push(required('spec.schedule'));
  } else {
    const err = scheduleError(schedule);
    if (err !== undefined) errs.push(invalid('spec.schedule', schedule, err));
    const allowTZ = oldSpec !== undefined && str(oldSpec, 'schedule').includes('TZ');
    if (allowTZ && schedule.includes('TZ') && has(spec, 'timeZone')) {
      errs.push(
        invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'),
      );
    } else if (!allowTZ && schedule.includes('TZ')) {
      errs.push(
        invalid(
          'spec.schedule',
          schedule,
          'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        ),
      );
    }
  }
  nonNegative(spec, 'startingDeadlineSeconds', 'spec', errs);
  const tz = optStr(spec, 'timeZone');
  if (tz !== undefined && (oldSpec === undefined || oldSpec['timeZone'] !== tz)) {
    if (tz === '') errs.push(invalid('spec.timeZone', tz, 'timeZone must be nil or non-empty string'));
    else if (
      tz
        .split('/')
        .some((p) => p === '.' || p === '..' || p.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(p))
    ) {
      errs.push(invalid('spec.timeZone', tz, `unknown time zone ${tz}`));
    } else if (tz.toLowerCase() === 'local') {
      errs.push(
        invalid(
          'spec.timeZone',
          tz,
          'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
        ),
      );
    } else if (!isKnownTimeZone(tz)) {
      errs.push(invalid('spec.timeZone', tz, `unknown time zone ${tz}`));
    }
  }
  const policy = str(spec, 'concurrencyPolicy');
  if (policy === '') errs.push(required('spec.concurrencyPolicy'));
  else if (!CONCURRENCY.includes(policy))
    errs.push(notSupported('spec.concurrencyPolicy', policy, CONCURRENCY));
  const jobSpec = obj(obj(spec, 'jobTemplate'), 'spec') ?? {};
  validateJobSpecBody(jobSpec, 'spec.jobTemplate.spec', errs);
  if (has(jobSpec, 'selector'))
    errs.push(
      invalid('spec.jobTemplate.spec.selector', jobSpec['selector'], '`selector` will be auto-generated'),
    );
  if (jobSpec['manualSelector'] === true)
    errs.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  nonNegative(spec, 'successfulJobsHistoryLimit', 'spec', errs);
  nonNegative(spec, 'failedJobsHistoryLimit', 'spec', errs);
}

function isKnownTimeZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
