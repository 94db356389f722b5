/**
 * Static pods from `staticPodPath`: every `.yaml`, `.yml` or `.json` file of the directory (or
 * the one file) holding a Pod, read every `fileCheckFrequency`. As kubelet does, each pod is
 * named `<name>-<nodeName>`, defaults to namespace `default`, gets a uid hashed from its content,
 * the node and the file, and the `kubernetes.io/config.*` annotations. A file that does not parse
 * is logged (with its path and the error) and skipped; the other pods keep running.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Pod } from '../../api/types/core-v1.js';

/** What the source reports. */
export interface StaticPodHandlers {
  update(pod: Pod): void;
  removed(uid: string): void;
  synced(): void;
}

/** Turns a manifest into the static pod kubelet would run. */
export function staticPod(manifest: Pod, nodeName: string, source: string): Pod {
  const hash = createHash('md5')
    .update(JSON.stringify(manifest))
    .update(nodeName)
    .update(source)
    .digest('hex');
  const ns = manifest.metadata.namespace || 'default';
  return {
    ...manifest,
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...manifest.metadata,
      name: `${manifest.metadata.name ?? ''}-${nodeName}`,
      namespace: ns,
      uid: hash,
      annotations: {
        ...(manifest.metadata.annotations ?? {}),
        'kubernetes.io/config.hash': hash,
        'kubernetes.io/config.seen': new Date().toISOString(),
        'kubernetes.io/config.source': 'file',
      },
    },
    spec: { ...manifest.spec, nodeName, restartPolicy: manifest.spec?.restartPolicy ?? 'Always' },
  };
}

/** Polls a static pod path. */
export class StaticFileSource {
  readonly #path: string;
  readonly #node: string;
  readonly #everyMs: number;
  readonly #handlers: StaticPodHandlers;
  readonly #known = new Map<string, string>();
  readonly #warned = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(path: string, nodeName: string, everyMs: number, handlers: StaticPodHandlers) {
    this.#path = path;
    this.#node = nodeName;
    this.#everyMs = everyMs;
    this.#handlers = handlers;
  }

  start(): void {
    this.#scan();
    this.#handlers.synced();
    this.#timer = setInterval(() => this.#scan(), this.#everyMs);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  #files(): string[] {
    if (!existsSync(this.#path)) return [];
    if (statSync(this.#path).isFile()) return [this.#path];
    return readdirSync(this.#path)
      .filter((f) => !f.startsWith('.') && /\.(ya?ml|json)$/.test(f))
      .sort()
      .map((f) => join(this.#path, f));
  }

  #scan(): void {
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    const seen = new Map<string, string>();
    for (const file of this.#files()) {
      try {
        const manifest = parse(readFileSync(file, 'utf8')) as Pod | null;
        if (!manifest || manifest.kind !== 'Pod' || !manifest.metadata?.name)
          throw new Error('not a Pod with a name');
        const pod = staticPod(manifest, this.#node, file);
        const uid = pod.metadata.uid ?? '';
        seen.set(uid, file);
        this.#warned.delete(file);
        if (!this.#known.has(uid)) this.#handlers.update(pod);
      } catch (err) {
        if (!this.#warned.has(file))
          console.error(`agent: static pod file ${file}: ${(err as Error).message}; skipped`);
        this.#warned.add(file);
      }
    }
    for (const uid of this.#known.keys()) if (!seen.has(uid)) this.#handlers.removed(uid);
    this.#known.clear();
    for (const [k, val] of seen) this.#known.set(k, val);
  }
}
