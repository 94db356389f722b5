/**
 * The admission chain: the enabled plugins in kube's order, every mutating step first, then
 * every validating step. One chain per server, built by the wiring (src/server/) from
 * `--enable-admission-plugins` / `--disable-admission-plugins`; an empty chain admits
 * everything.
 */
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';

/** The plugins of one server, in order. */
export class AdmissionChain {
  readonly #mutating: readonly AdmissionPlugin[];
  readonly #validating: readonly AdmissionPlugin[];

  constructor(readonly plugins: readonly AdmissionPlugin[]) {
    this.#mutating = plugins.filter((p) => p.admit !== undefined);
    this.#validating = plugins.filter((p) => p.validate !== undefined);
  }

  /**
   * Runs the mutating phase: each handling plugin's `admit`, in order, each plugin asked once
   * whether it handles `attrs`.
   * @throws ApiError
   */
  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const plugin of this.#mutating) {
      if (plugin.handles(attrs)) await plugin.admit?.(attrs);
    }
  }

  /** Runs the validating phase: each handling plugin's `validate`, in order. @throws ApiError */
  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const plugin of this.#validating) {
      if (plugin.handles(attrs)) await plugin.validate?.(attrs);
    }
  }
}

/** The chain that admits everything (tests, and servers with every plugin disabled). */
export const EMPTY_CHAIN = new AdmissionChain([]);
