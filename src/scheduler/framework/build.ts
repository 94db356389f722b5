/**
 * Builds a profile's {@link Framework} from its configuration as kube merges plugin sets: the
 * default multiPoint plugins, minus those disabled (`*` disables all), plus those enabled, then
 * per extension point the same again. A plugin name the registry lacks is a start-up error
 * naming it.
 */
import type { ExtensionPoint, PluginRef, ProfileConfig } from '../config.js';
import { SchedulerConfigError } from '../config.js';
import { DEFAULT_MULTIPOINT } from '../plugins/registry.js';
import { Framework, type PluginSet } from './runtime.js';
import type { Handle, Plugin, PluginFactory } from './types.js';

type Point = Exclude<ExtensionPoint, 'multiPoint' | 'permit' | 'postBind'>;

const METHOD: Record<Point, keyof Plugin> = {
  preEnqueue: 'preEnqueue',
  queueSort: 'less',
  preFilter: 'preFilter',
  filter: 'filter',
  postFilter: 'postFilter',
  preScore: 'preScore',
  score: 'score',
  reserve: 'reserve',
  preBind: 'preBind',
  bind: 'bind',
};

const KIND: Record<ExtensionPoint, string> = {
  multiPoint: 'MultiPoint',
  preEnqueue: 'PreEnqueue',
  queueSort: 'QueueSort',
  preFilter: 'PreFilter',
  filter: 'Filter',
  postFilter: 'PostFilter',
  preScore: 'PreScore',
  score: 'Score',
  reserve: 'Reserve',
  permit: 'Permit',
  preBind: 'PreBind',
  bind: 'Bind',
  postBind: 'PostBind',
};

function merge(base: readonly PluginRef[], list: ProfileConfig['plugins'][ExtensionPoint]): PluginRef[] {
  let out = [...base];
  const disabled = list?.disabled ?? [];
  if (disabled.some((d) => d.name === '*')) out = [];
  else out = out.filter((p) => !disabled.some((d) => d.name === p.name));
  for (const e of list?.enabled ?? []) {
    out = out.filter((p) => p.name !== e.name);
    out.push(e);
  }
  return out;
}

/** Creates the framework of one profile; `makeHandle` gives plugins their handle. */
export function buildFramework(
  profile: ProfileConfig,
  registry: ReadonlyMap<string, PluginFactory>,
  handle: Handle,
  defaultPercentage: number,
): Framework {
  const where = `creating profile for scheduler name ${profile.schedulerName}`;
  const multi = merge(DEFAULT_MULTIPOINT, profile.plugins.multiPoint);
  const instances = new Map<string, Plugin>();
  const instance = (ref: PluginRef, ep: ExtensionPoint): Plugin => {
    const existing = instances.get(ref.name);
    if (existing !== undefined) return existing;
    const factory = registry.get(ref.name);
    if (factory === undefined)
      throw new SchedulerConfigError(`${where}: ${KIND[ep]}Plugin "${ref.name}" does not exist`);
    const args = profile.pluginConfig.find((c) => c.name === ref.name)?.args ?? {};
    const p = factory(args, handle);
    instances.set(ref.name, p);
    return p;
  };
  for (const ref of multi) instance(ref, 'multiPoint');
  const weights = new Map<string, number>();
  const point = (ep: Point): Plugin[] => {
    const fromMulti = multi.filter((r) => instance(r, 'multiPoint')[METHOD[ep]] !== undefined);
    const refs = merge(fromMulti, profile.plugins[ep]);
    return refs.map((r) => {
      const p = instance(r, ep);
      if (p[METHOD[ep]] === undefined) {
        throw new SchedulerConfigError(`${where}: plugin "${r.name}" does not extend ${ep} plugin`);
      }
      if (ep === 'score') weights.set(r.name, r.weight ?? multi.find((m) => m.name === r.name)?.weight ?? 1);
      return p;
    });
  };
  const queueSort = point('queueSort');
  if (queueSort.length !== 1) {
    throw new SchedulerConfigError(
      `${where}: one queue sort plugin required for profile with scheduler name "${profile.schedulerName}"`,
    );
  }
  const bind = point('bind');
  if (bind.length === 0) {
    throw new SchedulerConfigError(
      `${where}: at least one bind plugin is needed for profile with scheduler name "${profile.schedulerName}"`,
    );
  }
  const score = point('score').map((plugin) => ({
    plugin,
    weight: Math.max(1, weights.get(plugin.name) ?? 1),
  }));
  const set: PluginSet = {
    queueSort: queueSort[0] as Plugin,
    preEnqueue: point('preEnqueue'),
    preFilter: point('preFilter'),
    filter: point('filter'),
    postFilter: point('postFilter'),
    preScore: point('preScore'),
    score,
    reserve: point('reserve'),
    preBind: point('preBind'),
    bind,
    all: [...instances.values()],
  };
  return new Framework(profile.schedulerName, set, profile.percentageOfNodesToScore ?? defaultPercentage);
}
