/**
 * One stock kubectl version bound to a server's admin kubeconfig, with the assertions every
 * step of the acceptance suite makes: a command that must succeed (exit 0, stderr shown on
 * failure), one that must fail, and JSON output parsed.
 */
import { expect } from 'vitest';
import { runKubectl, type KubectlResult, type KubectlVersion } from '../../support/server.js';

/** kubectl `version` against whatever server `kubeconfigPath()` names at the time of each call. */
export class Kubectl {
  readonly version: KubectlVersion;
  readonly #kubeconfigPath: () => string;

  /**
   * @param kubeconfigPath Read at every call, so that one client follows a server through a
   *   restart (the restarted server rewrites the same kubeconfig with its new port).
   */
  constructor(version: KubectlVersion, kubeconfigPath: () => string) {
    this.version = version;
    this.#kubeconfigPath = kubeconfigPath;
  }

  /** Runs `kubectl <args>`; never rejects for a non-zero exit. */
  run(...args: string[]): Promise<KubectlResult> {
    return runKubectl(this.version, args, this.#kubeconfigPath());
  }

  /** Runs `kubectl <args>`, expects exit 0, and returns stdout. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    expect(result.code, `kubectl ${this.version} ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  }

  /** Runs `kubectl <args>`, expects a non-zero exit, and returns stderr. */
  async fails(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    expect(result.code, `kubectl ${this.version} ${args.join(' ')} should fail: ${result.stdout}`).not.toBe(
      0,
    );
    return result.stderr;
  }

  /** Runs `kubectl <args> -o json` (must succeed) and parses the output. */
  async json(...args: string[]): Promise<unknown> {
    return JSON.parse(await this.ok(...args, '-o', 'json')) as unknown;
  }
}

/**
 * The value at `path` in parsed JSON or YAML (object keys and array indexes), or undefined when
 * any step is missing or of the wrong shape.
 */
export function pick(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(v)) return undefined;
      v = v[step] as unknown;
    } else {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
      v = (v as Record<string, unknown>)[step];
    }
  }
  return v;
}

/** The `items` of a parsed list (empty when there are none). */
export function items(list: unknown): unknown[] {
  const v = pick(list, 'items');
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** The non-empty lines of a command's output, trimmed. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The first column of a table printed by `kubectl get` (headers excluded). */
export function nameColumn(text: string): string[] {
  return lines(text)
    .filter((l) => !l.startsWith('NAME ') && !l.startsWith('NAMESPACE '))
    .map((l) => l.split(/\s+/)[0] ?? '');
}
