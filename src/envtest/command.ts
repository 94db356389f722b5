/**
 * `capstan envtest-assets [DIR]`: writes a directory for controller-runtime's envtest
 * (`KUBEBUILDER_ASSETS=DIR go test ./...`).
 */
import { fastestCliEntryPath } from '../server/package-version.js';
import { REAL_ETCD_ENV, writeEnvtestAssets } from './assets.js';

const HELP = `usage: capstan envtest-assets [DIR]

Writes DIR (default ./envtest-assets) for controller-runtime's envtest:
  kube-apiserver  runs \`capstan server\` with envtest's flags, its objects in memory
  etcd            a stand-in answering envtest's /health probe; it starts a server process for
                  kube-apiserver beforehand, so that the server starts sooner
  kubectl         a link to the kubectl found on PATH, when there is one

Then: KUBEBUILDER_ASSETS=DIR go test ./...
With ${REAL_ETCD_ENV}=1 in the environment, etcd runs the real etcd on PATH and Capstan stores
its data there (envtest's --etcd-servers).`;

/** Runs the subcommand; returns the exit status. */
export async function runEnvtestAssetsCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const unknown = argv.find((a) => a.startsWith('-'));
  if (unknown !== undefined || argv.length > 1) {
    console.error(unknown !== undefined ? `Error: unknown flag: ${unknown}` : 'Error: at most one DIR');
    console.error("Run 'capstan envtest-assets --help' for usage.");
    return 2;
  }
  // envtest starts the server once per suite or test: the shim runs the bundle when it was built
  // (it starts faster), else the build this command runs from.
  const mainJs = fastestCliEntryPath();
  const assets = await writeEnvtestAssets(argv[0] ?? 'envtest-assets', { mainJs });
  console.log(
    `wrote ${assets.dir}: kube-apiserver, etcd${assets.kubectl !== undefined ? `, kubectl -> ${assets.kubectl}` : ' (no kubectl found)'}`,
  );
  console.log(`use: KUBEBUILDER_ASSETS=${assets.dir} go test ./...`);
  return 0;
}
