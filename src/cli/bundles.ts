/**
 * Which file of the bundled build (tools/bundle.ts, bundle-loader.ts) runs a command. Every
 * command runs from the whole CLI's bundle, `capstan.cjs`, except the long-running components in
 * {@link COMPONENT_BUNDLES}: each has a bundle of its own holding only its command's code, so a
 * scheduler, controller-manager, node agent or proxy process does not keep the server's ~5 MB of
 * source in its heap (docs/bench/agent.md, 2026-12-02 evening). They get no code cache: they
 * start once and run for long, and the cache is the server's.
 */

/** The whole CLI's bundle, and the bundle of every command not in {@link COMPONENT_BUNDLES}. */
export const CLI_BUNDLE = 'capstan.cjs';

/**
 * The components with a bundle of their own: the command, and the modules (from `dist/src/`) that
 * src/cli/main.ts imports for it. The bundle `capstan-<command>.cjs` is main.ts with every other
 * command's module left out.
 */
export const COMPONENT_BUNDLES: Readonly<Record<string, readonly string[]>> = {
  scheduler: ['scheduler/command.js'],
  'controller-manager': ['controller-manager/command.js'],
  agent: ['agent/command.js', 'agent/simulated/command.js'],
  proxy: ['proxy/command.js'],
};

/** The bundle file (in the bundle's directory) that runs `command`. */
export function bundleFileOf(command: string | undefined): string {
  return command !== undefined && Object.hasOwn(COMPONENT_BUNDLES, command)
    ? `capstan-${command}.cjs`
    : CLI_BUNDLE;
}
