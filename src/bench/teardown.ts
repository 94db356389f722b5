/** Cleanups of a bench run. */

/** Cleanups run in reverse order of registration, every one even when an earlier one fails. */
export class Teardown {
  readonly #steps: (() => Promise<void> | void)[] = [];

  /** Registers a cleanup. */
  add(step: () => Promise<void> | void): void {
    this.#steps.push(step);
  }

  /** Runs every cleanup, last registered first; failures are ignored. */
  async run(): Promise<void> {
    for (const step of this.#steps.reverse()) await Promise.resolve(step()).catch(() => undefined);
  }
}
