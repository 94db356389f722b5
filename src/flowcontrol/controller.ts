/**
 * The APF configuration controller: at start it runs the bootstrap maintenance (ensure.ts), then
 * watches FlowSchemas and PriorityLevelConfigurations and, on every change (batched),
 * - puts the new configuration in force ({@link FlowControl.configure}),
 * - runs the maintenance again (a deleted or edited bootstrap object is restored at once, where
 *   kube waits for its next periodic pass),
 * - keeps each FlowSchema's `Dangling` status condition as kube writes it: `True`/`NotFound` when
 *   its priority level does not exist, `False`/`Found` when it does.
 */
import {
  cloneJson,
  decodeStored,
  isJsonObject,
  jsonEqual,
  rfc3339Seconds,
  type KubeObject,
} from '../api/object.js';
import { watchLoop, type Observed, type WatchLoop } from '../apiserver-loops/watch-loop.js';
import type { ResourceContext } from '../resource/context.js';
import { collectionSpan } from '../resource/keys.js';
import { applyUpdate } from '../resource/update.js';
import { serverWrite } from '../resource/write-options.js';
import {
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
  type BootstrapObject,
} from '../api/flowcontrol-bootstrap.js';
import { specOf } from './config.js';
import type { FlowControl } from './dispatcher.js';
import { ensureBootstrap, flowControlTypes, type FlowControlTypes } from './ensure.js';

/** kube's field manager for the status writes. */
export const CONSUMER_MANAGER = 'api-priority-and-fairness-config-consumer-v1';

/** The Dangling condition kube wants on a FlowSchema that names `level`. */
export function danglingCondition(
  level: string,
  exists: boolean,
): { status: string; reason: string; message: string } {
  return exists
    ? {
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`,
      }
    : {
        status: 'True',
        reason: 'NotFound',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
      };
}

function conditionsOf(obj: KubeObject): Record<string, unknown>[] {
  const status = obj['status'];
  if (!isJsonObject(status) || !Array.isArray(status['conditions'])) return [];
  return status['conditions'].filter(isJsonObject);
}

/** Options of {@link startFlowControlController}. */
export interface FlowControlControllerOptions {
  readonly flowControl: FlowControl;
  readonly onError: (message: string, err: unknown) => void;
}

/** A running controller. */
export interface FlowControlController {
  stop(): Promise<void>;
}

/** Starts the controller (see the module comment). */
export function startFlowControlController(
  ctx: ResourceContext,
  options: FlowControlControllerOptions,
): FlowControlController {
  const types: FlowControlTypes = flowControlTypes(ctx);
  const flowSchemas = new Map<string, KubeObject>();
  const priorityLevels = new Map<string, KubeObject>();
  let stopped = false;
  let synced = false;
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();
  const loops: WatchLoop[] = [];

  const reconcile = async (): Promise<void> => {
    // Suggested objects not (yet) stored are about to be (re)created by the maintenance: they
    // count from now on, so a first start does not send everyone to catch-all meanwhile.
    const config = (m: Map<string, KubeObject>, suggested: readonly BootstrapObject[]) => [
      ...[...m.values()].map((o) => ({
        name: o.metadata.name ?? '',
        uid: o.metadata.uid ?? '',
        spec: specOf(o),
      })),
      ...suggested.filter((b) => !m.has(b.name)).map((b) => ({ name: b.name, uid: '', spec: b.spec })),
    ];
    options.flowControl.configure(
      config(flowSchemas, SUGGESTED_FLOW_SCHEMAS),
      config(priorityLevels, SUGGESTED_PRIORITY_LEVELS),
    );
    try {
      await ensureBootstrap(ctx, types, { flowSchemas, priorityLevels });
    } catch (err) {
      options.onError('maintaining the APF bootstrap configuration failed', err);
    }
    for (const fs of [...flowSchemas.values()]) {
      if (stopped) return;
      try {
        await updateDangling(fs);
      } catch (err) {
        options.onError(`updating the status of FlowSchema ${fs.metadata.name ?? ''} failed`, err);
      }
    }
  };

  const updateDangling = async (fs: KubeObject): Promise<void> => {
    const spec = specOf(fs);
    const ref = spec['priorityLevelConfiguration'];
    const level = isJsonObject(ref) && typeof ref['name'] === 'string' ? ref['name'] : '';
    const want = danglingCondition(level, priorityLevels.has(level));
    const have = conditionsOf(fs).find((c) => c['type'] === 'Dangling');
    if (
      have !== undefined &&
      have['status'] === want.status &&
      have['reason'] === want.reason &&
      have['message'] === want.message
    )
      return;
    await applyUpdate(ctx, {
      type: types.flowSchemas,
      namespace: undefined,
      name: fs.metadata.name ?? '',
      part: 'status',
      subresource: 'status',
      allowCreate: false,
      write: { ...serverWrite(), manager: CONSUMER_MANAGER },
      build: (current) => {
        const next = cloneJson(current as KubeObject);
        const condition = { type: 'Dangling', ...want, lastTransitionTime: rfc3339Seconds(ctx.now()) };
        const others = conditionsOf(next).filter((c) => c['type'] !== 'Dangling');
        next['status'] = {
          ...(isJsonObject(next['status']) ? next['status'] : {}),
          conditions: [...others, condition],
        };
        return next;
      },
    });
  };

  const schedule = (): void => {
    if (!synced || scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      running = running.then(reconcile);
    });
  };

  const track = (map: Map<string, KubeObject>) => async (change: Observed) => {
    const name = (change.obj ?? change.previous)?.metadata.name;
    if (name === undefined) return;
    const before = map.get(name);
    if (change.obj === undefined) map.delete(name);
    else map.set(name, change.obj);
    if (change.obj !== undefined && before !== undefined && jsonEqual(before, change.obj)) return;
    schedule();
  };

  const start = async (): Promise<void> => {
    // One consistent first view of both kinds before anything is decided from it.
    for (const [type, map] of [
      [types.priorityLevels, priorityLevels],
      [types.flowSchemas, flowSchemas],
    ] as const) {
      const listed = await ctx.store.range(collectionSpan(type, undefined));
      for (const kv of listed.items) {
        const obj = decodeStored(kv.value, kv.modRevision);
        map.set(obj.metadata.name ?? '', obj);
      }
    }
    if (stopped) return;
    synced = true;
    running = running.then(reconcile);
    loops.push(watchLoop(ctx, collectionSpan(types.priorityLevels, undefined), track(priorityLevels)));
    loops.push(watchLoop(ctx, collectionSpan(types.flowSchemas, undefined), track(flowSchemas)));
  };
  const started = (async () => {
    // The store may not answer yet: try again each second until stopped.
    while (!stopped) {
      try {
        await start();
        return;
      } catch (err) {
        options.onError('starting the APF configuration controller failed', err);
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      await started;
      await Promise.all(loops.map((l) => l.stop()));
      await running;
    },
  };
}
