import { describe, expect, it } from 'vitest';
import { validateObject } from '../../src/validation/index.js';
import { defaultObject } from '../../src/defaults/index.js';
import { prepareForCreate, prepareForUpdate } from '../../src/defaults/prepare.js';
import {
  clone,
  container,
  createErrors,
  defaulted,
  expectError,
  expectValid,
  template,
  updateErrors,
} from './helpers.js';

const meta = { name: 'web', namespace: 'default' };
const selector = { matchLabels: { app: 'web' } };

describe('Deployment', () => {
  const deployment = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: meta,
    spec: { selector, template: template(), ...spec },
  });

  it('accepts a defaulted deployment', () => {
    expectValid(createErrors('apps', 'Deployment', deployment()));
  });

  it('requires a selector, and reports the template mismatch as kube does', () => {
    const errs = createErrors('apps', 'Deployment', { metadata: meta, spec: { template: template() } });
    expect(expectError(errs, 'spec.selector', 'FieldValueRequired').message).toBe('Required value');
    expect(expectError(errs, 'spec.template.metadata.labels', 'FieldValueInvalid').message).toBe(
      'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    );
  });

  it('rejects a selector that does not match the template, and an empty one', () => {
    expectError(
      createErrors('apps', 'Deployment', deployment({ selector: { matchLabels: { app: 'db' } } })),
      'spec.template.metadata.labels',
      'FieldValueInvalid',
    );
    expect(
      expectError(
        createErrors('apps', 'Deployment', deployment({ selector: {} })),
        'spec.selector',
        'FieldValueInvalid',
      ).message,
    ).toBe('Invalid value: {}: empty selector is invalid for deployment');
    const expr = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] };
    expectValid(createErrors('apps', 'Deployment', deployment({ selector: expr })));
    const bad = { matchExpressions: [{ key: 'app', operator: 'Near' }] };
    expectError(
      createErrors('apps', 'Deployment', deployment({ selector: bad })),
      'spec.selector.matchExpressions[0].operator',
      'FieldValueInvalid',
    );
  });

  it('keeps the selector immutable on update', () => {
    const stored = defaulted('apps', 'Deployment', deployment());
    const changed = clone(stored);
    (changed['spec'] as Record<string, unknown>)['selector'] = { matchLabels: { app: 'web', tier: 'x' } };
    (
      changed['spec'] as { template: { metadata: { labels: Record<string, string> } } }
    ).template.metadata.labels['tier'] = 'x';
    expect(
      expectError(updateErrors('apps', 'Deployment', changed, stored), 'spec.selector', 'FieldValueInvalid')
        .message,
    ).toBe('Invalid value: {"matchLabels":{"app":"web","tier":"x"}}: field is immutable');
    const scaled = clone(stored);
    (scaled['spec'] as Record<string, unknown>)['replicas'] = 5;
    expectValid(updateErrors('apps', 'Deployment', scaled, stored));
  });

  it('validates the rolling update and restart policy', () => {
    const errs = createErrors(
      'apps',
      'Deployment',
      deployment({
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } },
      }),
    );
    expect(expectError(errs, 'spec.strategy.rollingUpdate.maxUnavailable', 'FieldValueInvalid').message).toBe(
      'Invalid value: "0%": may not be 0 when `maxSurge` is 0',
    );
    const pct = createErrors(
      'apps',
      'Deployment',
      deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%' } } }),
    );
    expectError(pct, 'spec.strategy.rollingUpdate.maxUnavailable', 'FieldValueInvalid');
    const never = createErrors(
      'apps',
      'Deployment',
      deployment({ template: template({ restartPolicy: 'Never' }) }),
    );
    expect(expectError(never, 'spec.template.spec.restartPolicy', 'FieldValueNotSupported').message).toBe(
      'Unsupported value: "Never": supported values: "Always"',
    );
    const deadline = createErrors('apps', 'Deployment', deployment({ minReadySeconds: 700 }));
    expect(expectError(deadline, 'spec.progressDeadlineSeconds', 'FieldValueInvalid').message).toBe(
      'Invalid value: 600: must be greater than minReadySeconds',
    );
  });

  it('validates the containers of the template with full paths', () => {
    const errs = createErrors(
      'apps',
      'Deployment',
      deployment({ template: template({ containers: [container('Web', '')] }) }),
    );
    expectError(errs, 'spec.template.spec.containers[0].name', 'FieldValueInvalid');
    expectError(errs, 'spec.template.spec.containers[0].image', 'FieldValueRequired');
  });
});

describe('ReplicaSet, DaemonSet, StatefulSet', () => {
  it('ReplicaSet: like Deployment, with an immutable selector', () => {
    expectValid(
      createErrors('apps', 'ReplicaSet', { metadata: meta, spec: { selector, template: template() } }),
    );
    expectError(
      createErrors('apps', 'ReplicaSet', { metadata: meta, spec: { template: template() } }),
      'spec.selector',
      'FieldValueRequired',
    );
  });

  it('DaemonSet: valid defaults, one of maxSurge and maxUnavailable', () => {
    expectValid(
      createErrors('apps', 'DaemonSet', { metadata: meta, spec: { selector, template: template() } }),
    );
    const errs = createErrors('apps', 'DaemonSet', {
      metadata: meta,
      spec: {
        selector,
        template: template(),
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
      },
    });
    expect(expectError(errs, 'spec.updateStrategy.rollingUpdate.maxSurge', 'FieldValueInvalid').message).toBe(
      'Invalid value: 1: may not be set when maxUnavailable is non-zero',
    );
    const onDelete = createErrors('apps', 'DaemonSet', {
      metadata: meta,
      spec: { selector, template: template(), updateStrategy: { type: 'Sometimes' } },
    });
    expectError(onDelete, 'spec.updateStrategy', 'FieldValueNotSupported');
  });

  it('StatefulSet: DNS-label names, policies, and only some fields may change', () => {
    const ss = { metadata: meta, spec: { selector, serviceName: 'web', template: template() } };
    expectValid(createErrors('apps', 'StatefulSet', ss));
    expectError(
      createErrors('apps', 'StatefulSet', { ...ss, metadata: { ...meta, name: 'web.v1' } }),
      'metadata.name',
      'FieldValueInvalid',
    );
    const bad = createErrors('apps', 'StatefulSet', {
      ...ss,
      spec: {
        ...ss.spec,
        podManagementPolicy: 'Random',
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' },
      },
    });
    expect(expectError(bad, 'spec.podManagementPolicy', 'FieldValueInvalid').message).toBe(
      `Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`,
    );
    expectError(bad, 'spec.persistentVolumeClaimRetentionPolicy.whenDeleted', 'FieldValueNotSupported');
    const stored = defaulted('apps', 'StatefulSet', ss);
    const renamed = clone(stored);
    (renamed['spec'] as Record<string, unknown>)['serviceName'] = 'other';
    expect(
      expectError(updateErrors('apps', 'StatefulSet', renamed, stored), 'spec', 'FieldValueForbidden')
        .message,
    ).toContain("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template'");
  });
});

describe('Job', () => {
  const job = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: { name: 'pi', namespace: 'default' },
    spec: { template: template({ restartPolicy: 'Never' }), ...spec },
  });

  it('accepts a job once its selector is generated', () => {
    expectValid(createErrors('batch', 'Job', job()));
  });

  it('generates the selector and template labels from the uid', () => {
    const o = defaulted('batch', 'Job', job());
    (o['metadata'] as Record<string, unknown>)['uid'] = 'u-1';
    prepareForCreate('batch', 'Job', o);
    const spec = o['spec'] as { selector: unknown; template: { metadata: { labels: unknown } } };
    expect(spec.selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } });
    expect(spec.template.metadata.labels).toEqual({
      app: 'web',
      'job-name': 'pi',
      'batch.kubernetes.io/job-name': 'pi',
      'controller-uid': 'u-1',
      'batch.kubernetes.io/controller-uid': 'u-1',
    });
    expect((o['metadata'] as { labels: unknown }).labels).toEqual({ app: 'web' });
  });

  it('requires OnFailure or Never restarts', () => {
    const errs = createErrors('batch', 'Job', job({ template: template() }));
    expect(expectError(errs, 'spec.template.spec.restartPolicy', 'FieldValueRequired').message).toBe(
      'Required value: valid values: "OnFailure", "Never"',
    );
  });

  it('requires a selector when it is manual, matching the template', () => {
    const errs = createErrors('batch', 'Job', job({ manualSelector: true }));
    expectError(errs, 'spec.selector', 'FieldValueRequired');
    expectValid(createErrors('batch', 'Job', job({ manualSelector: true, selector })));
  });

  it('validates counts and completion modes', () => {
    const errs = createErrors(
      'batch',
      'Job',
      job({ parallelism: -1, completionMode: 'Sometimes', backoffLimitPerIndex: 1 }),
    );
    expect(expectError(errs, 'spec.parallelism', 'FieldValueInvalid').message).toBe(
      'Invalid value: -1: must be greater than or equal to 0',
    );
    expectError(errs, 'spec.completionMode', 'FieldValueNotSupported');
    expectError(errs, 'spec.backoffLimitPerIndex', 'FieldValueInvalid');
  });

  it('keeps the template immutable on update unless suspended and never started', () => {
    const create = (spec: Record<string, unknown>): Record<string, unknown> => {
      const o = defaulted('batch', 'Job', job(spec));
      (o['metadata'] as Record<string, unknown>)['uid'] = 'u-1';
      prepareForCreate('batch', 'Job', o);
      return o;
    };
    const stored = create({});
    const changed = clone(stored);
    (changed['spec'] as { template: { spec: Record<string, unknown> } }).template.spec['nodeSelector'] = {
      zone: 'a',
    };
    expect(
      expectError(updateErrors('batch', 'Job', changed, stored), 'spec.template', 'FieldValueInvalid')
        .message,
    ).toMatch(/field is immutable$/);
    const suspended = create({ suspend: true });
    const moved = clone(suspended);
    (moved['spec'] as { template: { spec: Record<string, unknown> } }).template.spec['nodeSelector'] = {
      zone: 'a',
    };
    expectValid(updateErrors('batch', 'Job', moved, suspended));
  });
});

describe('CronJob', () => {
  const cron = (spec: Record<string, unknown> = {}, name = 'nightly'): Record<string, unknown> => ({
    metadata: { name, namespace: 'default' },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: { spec: { template: template({ restartPolicy: 'OnFailure' }) } },
      ...spec,
    },
  });

  it('accepts a defaulted cron job', () => {
    expectValid(createErrors('batch', 'CronJob', cron()));
    expectValid(createErrors('batch', 'CronJob', cron({ schedule: '@hourly' })));
    expectValid(
      createErrors(
        'batch',
        'CronJob',
        cron({ schedule: '*/15 9-17 * JAN-MAR mon-fri', timeZone: 'Europe/Berlin' }),
      ),
    );
  });

  it('requires a valid schedule', () => {
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({ schedule: '' })),
        'spec.schedule',
        'FieldValueRequired',
      ).message,
    ).toBe('Required value');
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({ schedule: '* * *' })),
        'spec.schedule',
        'FieldValueInvalid',
      ).message,
    ).toBe('Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]');
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({ schedule: '61 * * * *' })),
        'spec.schedule',
        'FieldValueInvalid',
      ).message,
    ).toBe('Invalid value: "61 * * * *": end of range (61) above maximum (59): 61');
    const tz = createErrors('batch', 'CronJob', cron({ schedule: 'TZ=UTC 0 3 * * *' }));
    expect(expectError(tz, 'spec.schedule', 'FieldValueInvalid').message).toContain(
      'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    );
    // robfig's own words: a zone it cannot load, and descriptors matched case-sensitively.
    const badZone = createErrors('batch', 'CronJob', cron({ schedule: 'TZ=Mars/Olympus 0 3 * * *' }));
    expect(badZone.map((e) => e.message)).toContain(
      'Invalid value: "TZ=Mars/Olympus 0 3 * * *": provided bad location Mars/Olympus: unknown time zone Mars/Olympus',
    );
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({ schedule: '@HOURLY' })),
        'spec.schedule',
        'FieldValueInvalid',
      ).message,
    ).toBe('Invalid value: "@HOURLY": unrecognized descriptor: @HOURLY');
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({ schedule: '@every 1x' })),
        'spec.schedule',
        'FieldValueInvalid',
      ).message,
    ).toMatch(
      /^Invalid value: "@every 1x": failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"$/,
    );
  });

  it('limits names to 52 characters on create and forbids job selectors', () => {
    expect(
      expectError(
        createErrors('batch', 'CronJob', cron({}, 'a'.repeat(53))),
        'metadata.name',
        'FieldValueInvalid',
      ).message,
    ).toMatch(/must be no more than 52 characters$/);
    const sel = createErrors(
      'batch',
      'CronJob',
      cron({ jobTemplate: { spec: { selector, template: template({ restartPolicy: 'Never' }) } } }),
    );
    expectError(sel, 'spec.jobTemplate.spec.selector', 'FieldValueInvalid');
    expectError(
      createErrors('batch', 'CronJob', cron({ concurrencyPolicy: 'Sometimes' })),
      'spec.concurrencyPolicy',
      'FieldValueNotSupported',
    );
  });
});

describe('prepare', () => {
  it('DaemonSet template generation starts at 1 and follows template changes', () => {
    const ds = defaulted('apps', 'DaemonSet', { metadata: meta, spec: { selector, template: template() } });
    prepareForCreate('apps', 'DaemonSet', ds);
    expect((ds['metadata'] as { annotations: unknown }).annotations).toEqual({
      'deprecated.daemonset.template.generation': '1',
    });
    const next = clone(ds);
    (
      next['spec'] as { template: { spec: { containers: { image: string }[] } } }
    ).template.spec.containers[0]!.image = 'nginx:1.28';
    prepareForUpdate('apps', 'DaemonSet', next, ds);
    expect((next['metadata'] as { annotations: unknown }).annotations).toEqual({
      'deprecated.daemonset.template.generation': '2',
    });
    const same = clone(next);
    prepareForUpdate('apps', 'DaemonSet', same, next);
    expect((same['metadata'] as { annotations: unknown }).annotations).toEqual({
      'deprecated.daemonset.template.generation': '2',
    });
  });

  it('validation of a full create pipeline reports no errors for defaulted kinds', () => {
    const o = clone({ metadata: meta, spec: { selector, template: template() } });
    defaultObject('apps', 'Deployment', o);
    expect(validateObject('apps', 'Deployment', o)).toEqual([]);
  });
});
