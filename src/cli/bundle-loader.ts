#!/usr/bin/env node
/**
 * The entry of the bundled build (`dist/bundle/capstan.js`, made from this file by
 * tools/bundle.ts): runs the one-file CommonJS bundle of the CLI (`capstan.cjs` beside it) with
 * V8's code cache (`capstan.cjs.cache`), so a process skips parsing and compiling most of the
 * code it runs while starting. Node 20 has no code cache for ES modules, hence CommonJS here.
 * A long-running component (`capstan scheduler`, …) runs its own smaller bundle instead, without
 * a cache (bundles.ts).
 *
 * The cache is V8's own and is checked by V8: a cache from another Node or V8 version, other V8
 * flags or another bundle is rejected and the bundle compiles as usual (only slower). The build
 * writes it by running a server once with {@link CODE_CACHE_WRITE_ENV} set; a running server
 * never writes it otherwise.
 */
import { renameSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { bundleFileOf } from './bundles.js';
import { CODE_CACHE_WRITE_ENV } from './code-cache.js';

const dir = dirname(fileURLToPath(import.meta.url));
const file = join(dir, bundleFileOf(process.argv[2]));
const cacheFile = `${file}.cache`;

function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

/**
 * The bundle's text is CommonJS's module function around the code, in ASCII (tools/bundle.ts):
 * read as latin1 it is compiled as it is, one one-byte string kept by V8 as the script's source.
 */
function compile(): Script {
  const cachedData = readCache();
  return new Script(readFileSync(file, 'latin1'), {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
}

const script = compile();
if (process.env[CODE_CACHE_WRITE_ENV] !== undefined) {
  process.on('exit', () => {
    // What V8 compiled until now (start, requests, shutdown) goes into the cache.
    writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
    renameSync(`${cacheFile}.tmp`, cacheFile);
  });
}
const run = script.runInThisContext() as (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void;
const bundleModule = { exports: {} };
run(bundleModule.exports, createRequire(file), bundleModule, file, dir);
