/**
 * kube's `slowStartBatch`: run `count` calls in batches of 1, 2, 4, ... (starting at
 * `initialBatch`), each batch in parallel; stop after the first batch with a failure. A flood of
 * creates that all fail (quota, admission) then costs one request, not hundreds.
 */

/** Successes, and the first error if a batch failed (the rest were not attempted). */
export interface BatchOutcome {
  readonly successes: number;
  readonly error: unknown;
}

/** Runs `fn` up to `count` times in growing batches. */
export async function slowStartBatch(
  count: number,
  initialBatch: number,
  fn: () => Promise<void>,
): Promise<BatchOutcome> {
  let remaining = count;
  let successes = 0;
  for (let size = Math.min(remaining, initialBatch); size > 0; size = Math.min(2 * size, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: size }, () => fn()));
    let error: unknown;
    for (const r of results) {
      if (r.status === 'fulfilled') successes++;
      else error ??= r.reason;
    }
    if (error !== undefined) return { successes, error };
    remaining -= size;
  }
  return { successes, error: undefined };
}
