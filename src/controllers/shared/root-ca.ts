/**
 * The cluster's root CA bundle as kube-controller-manager finds it for the root CA publisher
 * and the token controller: the `--root-ca-file`, or else the CA the manager's own client
 * trusts the API server with (kube: the root client config's CAData).
 */
import { readFile } from 'node:fs/promises';
import type { ControllerContext } from '../context.js';

/**
 * The root CA bundle (PEM).
 * @throws Error when `--root-ca-file` cannot be read, or there is no file and no client CA.
 */
export async function rootCaOf(ctx: ControllerContext): Promise<string> {
  if (ctx.config.rootCaFile !== '') return readFile(ctx.config.rootCaFile, 'utf8');
  const ca = ctx.client.config.caData;
  if (ca === undefined || ca.length === 0) {
    throw new Error('no --root-ca-file and the client has no CA bundle');
  }
  return ca.toString('utf8');
}
