#!/usr/bin/env node
/**
 * The `capstan` command: parse the subcommand, hand off, map failure to an exit code.
 */
import { readFileSync } from 'node:fs';

const USAGE = `usage: capstan <command> [flags]

commands:
  server    run the API server
  version   print the version`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  switch (command) {
    case 'version':
      console.log(`capstan ${version()}`);
      return 0;
    case 'server':
      console.error('capstan server: the API server is not built yet (storage engine only in this version)');
      return 1;
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
