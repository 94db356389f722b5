/**
 * The model-based property: random interleavings of every operation, each compared with the
 * reference model (see `../property/runner.ts`).
 *
 * Environment: `CAPSTAN_PROPERTY_RUNS` (number of runs), `CAPSTAN_PROPERTY_SEED` (replay a seed),
 * `CAPSTAN_PROPERTY_PATH` (with a seed: replay
 * one counterexample by the path fast-check reported), `CAPSTAN_PROPERTY_SHRINK=0` (report the first failure unshrunk), `CAPSTAN_MODEL_BUG=1` (seed a
 * bug into the model: the property must then fail).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoreCapabilities } from '../../../../storage/interface.js';
import type { StoreFactory } from '../factory.js';
import { opsArbitrary } from '../property/ops.js';
import { runOps } from '../property/runner.js';

/** Time for the whole property, shrinking included; beyond it the run fails with what it found. */
const TIME_LIMIT_MS = 150_000;

/** Operations per run. */
const MAX_OPS = 50;
/** Fewest runs a time-limited property must complete. */
const MIN_RUNS = 5;

/** Runs sized so the whole property takes seconds in memory and well under a minute on disk. */
function defaultRuns(capabilities: StoreCapabilities): number {
  if (capabilities.shared) return 25;
  if (capabilities.persistent) return 60;
  return 200;
}

function envNumber(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new Error(`${name} must be an integer, not ${JSON.stringify(text)}`);
  return value;
}

export function propertyCases(factory: StoreFactory): void {
  describe('model-based property', () => {
    it(
      'every interleaving of writes, paged reads, watches, compactions and leases matches the model',
      async () => {
        const probe = await factory.open();
        const capabilities = probe.capabilities;
        await probe.close();
        const numRuns =
          envNumber('CAPSTAN_PROPERTY_RUNS') ?? factory.propertyRuns ?? defaultRuns(capabilities);
        const seed = envNumber('CAPSTAN_PROPERTY_SEED') ?? factory.propertySeed;
        const path = process.env.CAPSTAN_PROPERTY_PATH;
        const seededBug = process.env.CAPSTAN_MODEL_BUG === '1';
        const canReopen = capabilities.persistent && factory.reopen !== undefined;
        const details = await fc.check(
          fc.asyncProperty(opsArbitrary(canReopen, MAX_OPS), (ops) => runOps(factory, ops, seededBug)),
          {
            numRuns,
            ...(seed === undefined ? {} : { seed }),
            ...(seed !== undefined && path ? { path } : {}),
            ...(process.env.CAPSTAN_PROPERTY_SHRINK === '0' ? { endOnFailure: true } : {}),
            // On a loaded machine, stop at the time limit with the runs made so far; a failure found
            // before it (shrunk as far as time allowed) still fails the test.
            interruptAfterTimeLimit: TIME_LIMIT_MS,
            markInterruptAsFailure: false,
          },
        );
        if (details.failed) {
          // The report names the counterexample; the assertion that failed says what went wrong.
          const cause = details.errorInstance instanceof Error ? details.errorInstance.message : '';
          throw new Error(`${fc.defaultReportMessage(details)}\n\nFailed assertion: ${cause}`);
        }
        // A time-limited run must still have exercised the store.
        expect(details.numRuns).toBeGreaterThanOrEqual(Math.min(numRuns, MIN_RUNS));
      },
      // A hang guard for slow machines, not a performance claim.
      600_000,
    );
  });
}
