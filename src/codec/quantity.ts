/**
 * Canonical quantity text with a bounded memo. Go parses every `resource.Quantity` and writes
 * its canonical form (`0.5` → `500m`, `1024Mi` → `1Gi`) into both JSON and protobuf, so the
 * codec must too to match kube's bytes. Parsing is exact bigint arithmetic
 * (`src/validation/quantity.ts`), so results are memoised: real objects repeat a handful of
 * quantities (`100m`, `128Mi`) across thousands of items.
 */
import { canonicalQuantityText } from '../validation/quantity.js';

/** Memoises canonical quantity texts; the memo is dropped whole when it fills up. */
export class QuantityCanonicalizer {
  readonly #memo = new Map<string, string | null>();
  readonly #limit: number;

  constructor(limit = 4096) {
    this.#limit = limit;
  }

  /**
   * The canonical text of a quantity given as JSON string or number, or undefined when it is
   * not a quantity (Go rejects it).
   * @example canonical('0.5') // '500m'
   */
  canonical(input: string | number): string | undefined {
    const key = typeof input === 'number' ? String(input) : input;
    let out = this.#memo.get(key);
    if (out === undefined) {
      out = canonicalQuantityText(input) ?? null;
      if (this.#memo.size >= this.#limit) this.#memo.clear();
      this.#memo.set(key, out);
    }
    return out ?? undefined;
  }
}
