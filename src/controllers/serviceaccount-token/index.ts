/**
 * The `serviceaccount-token-controller` (alias `serviceaccount-token`): see `controller.ts`.
 * It needs `--service-account-private-key-file` (kube's controller does not start without it)
 * and acts as the manager itself, as kube's (started with the root client builder).
 */
import { readFile } from 'node:fs/promises';
import type { ControllerDescriptor } from '../context.js';
import { rootCaOf } from '../shared/root-ca.js';
import { TokensController } from './controller.js';
import { legacyTokenSigner } from './jwt.js';

/** Registry entry. */
export const serviceAccountTokenController: ControllerDescriptor = {
  name: 'serviceaccount-token-controller',
  aliases: ['serviceaccount-token'],
  serviceAccount: 'tokens-controller',
  rootClient: true,
  async start(ctx) {
    const file = ctx.config.serviceAccountPrivateKeyFile;
    if (file === '') {
      ctx.log.warn('not started: no --service-account-private-key-file');
      return;
    }
    const signer = legacyTokenSigner(await readFile(file, 'utf8'));
    new TokensController(ctx, signer, await rootCaOf(ctx)).start();
  },
};
