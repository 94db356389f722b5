/**
 * The controller manager inside `capstan server`: the same manager `capstan controller-manager`
 * runs, reaching this server over HTTPS on 127.0.0.1 as `system:kube-controller-manager` (a
 * client certificate minted from the server's CA), with kube's defaults and leader election, so
 * several servers over one store still run one set of controllers. Controllers act as their own
 * service accounts (`--use-service-account-credentials`, as kubeadm configures kube): the
 * bootstrap RBAC policy grants `system:kube-controller-manager` little beyond reading. The CSR
 * signer is given the server's cluster CA (kube's `--cluster-signing-{cert,key}-file`).
 */
import type { ServerPki } from '../pki/server-pki.js';
import type { ControllersConfig } from '../controllers/config.js';
import { defaultManagerOptions } from '../controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../controller-manager/manager.js';
import type { ServerLog } from './log.js';
import { loopbackConfig } from './loopback.js';

/**
 * Starts the in-process manager with `controllers` (the `--controllers` selection). `config`
 * sets controller flags the server knows the values of (`--service-account-private-key-file`:
 * the server's own signing key, so legacy token Secrets verify).
 */
export async function startInProcessControllerManager(
  pki: ServerPki,
  url: string,
  controllers: readonly string[],
  log: ServerLog,
  config: Partial<Pick<ControllersConfig, 'serviceAccountPrivateKeyFile'>> = {},
): Promise<RunningManager> {
  const clientConfig = await loopbackConfig(
    { url, ca: pki.ca, servingTrustPem: pki.servingTrustPem },
    { user: 'system:kube-controller-manager' },
  );
  const defaults = defaultManagerOptions({
    controllers,
    useServiceAccountCredentials: true,
    // The loopback is not a shared network: kube's client limits would only slow it down.
    qps: -1,
    burst: 0,
  });
  // The CSR signer issues from the server's cluster CA, which client certificates authenticate against.
  const clusterSigning = { ...defaults.config.clusterSigning, ca: pki.ca };
  const options = { ...defaults, config: { ...defaults.config, ...config, clusterSigning } };
  return startControllerManager({
    clientConfig,
    options,
    log: {
      info: (line) =>
        process.env['CAPSTAN_CM_VERBOSE'] === '1' ? log.warn(`controller-manager: ${line}`) : undefined,
      warn: (line) => log.warn(`controller-manager: ${line}`),
      error: (line, err) => log.error(`controller-manager: ${line}`, err),
    },
  });
}
