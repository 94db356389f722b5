/**
 * The CSR signing controller against a real server, as kube-controller-manager runs it with
 * `--cluster-signing-cert-file`/`--cluster-signing-key-file` (the server's CA here) and a short
 * `--cluster-signing-duration`: approved requests for the four kube signers are signed with the
 * requested usages and names; `spec.expirationSeconds` shortens the lifetime but never under
 * 10 minutes; a request a signer refuses gets `Failed`/`SignerValidationFailure` with kube's
 * message; unapproved, denied and foreign requests are left alone. The signer-file rules
 * (nothing given: not started; both kinds given: refused) hold too.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSigningRequest } from '../../src/api/types/certificates-v1.js';
import { CERTIFICATE_SIGNING_REQUESTS, loadKubeconfig, type ResourceClient } from '../../src/client/index.js';
import { csrSigningController } from '../../src/controllers/csrsigning/index.js';
import { Authority } from '../../src/controllers/csrsigning/authority.js';
import { parseControllerManagerArgs } from '../../src/controller-manager/options.js';
import { startControllerManager } from '../../src/controller-manager/manager.js';
import { generateKeyPair } from '../../src/pki/certificate.js';
import { createCsr, type RequestedNames } from '../../src/pki/csr.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let csrs: ResourceClient<CertificateSigningRequest>;
let ca: X509Certificate;
const MINUTE = 60_000;

async function create(
  name: string,
  subject: { commonName: string; organizations?: string[] },
  signerName: string,
  usages: string[],
  extra: { names?: RequestedNames; expirationSeconds?: number } = {},
): Promise<void> {
  const keys = await generateKeyPair();
  const pem = createCsr(subject, keys.publicKey, keys.privateKey, extra.names ?? {});
  await csrs.create({
    metadata: { name },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName,
      usages,
      ...(extra.expirationSeconds === undefined ? {} : { expirationSeconds: extra.expirationSeconds }),
    },
  });
}

async function decide(name: string, type: 'Approved' | 'Denied'): Promise<void> {
  const csr = await csrs.get(name);
  await csrs.updateSubresource(name, 'approval', {
    ...csr,
    status: { conditions: [{ type, status: 'True', reason: 'Test', message: 'by the test' }] },
  });
}

async function certificateOf(name: string): Promise<X509Certificate> {
  const csr = await until(`${name} signed`, async () => {
    const c = await csrs.get(name);
    return (c.status?.certificate ?? '') === '' ? undefined : c;
  });
  const cert = new X509Certificate(Buffer.from(csr.status?.certificate ?? '', 'base64'));
  expect(cert.verify(ca.publicKey)).toBe(true);
  return cert;
}

async function failureOf(name: string): Promise<unknown> {
  return until(`${name} failed`, async () => {
    const c = await csrs.get(name);
    return c.status?.conditions?.find((x) => x.type === 'Failed');
  });
}

function lifetime(cert: X509Certificate): number {
  return Date.parse(cert.validTo) - Date.parse(cert.validFrom);
}

beforeAll(async () => {
  // The server's certificates are made before the manager starts; the harness's cert dir is known in advance.
  env = await startInfraEnv([csrSigningController], [], []);
  const certFile = join(env.server.certDir, 'ca.crt');
  const keyFile = join(env.server.certDir, 'ca.key');
  ca = new X509Certificate(await readFile(certFile, 'utf8'));
  await env.manager.stop();
  // A second manager with the signing flags (the first had none, so its signer did not run).
  const parsed = parseControllerManagerArgs([
    '--leader-elect=false',
    '--secure-port=0',
    `--cluster-signing-cert-file=${certFile}`,
    `--cluster-signing-key-file=${keyFile}`,
    '--cluster-signing-duration=2h',
  ]);
  if (parsed.help) throw new Error('unexpected --help');
  const manager = startControllerManager({
    clientConfig: loadKubeconfig(env.server.kubeconfigPath),
    options: { ...parsed.options, qps: -1, burst: 0 },
    controllers: [csrSigningController],
    log: {
      info: () => undefined,
      warn: () => undefined,
      error: (l, e) => env.errors.push(`${l}: ${String(e)}`),
    },
  });
  const first = env;
  env = {
    ...first,
    close: async () => {
      await manager.stop();
      await first.close();
    },
  };
  csrs = env.client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
}, 60_000);
afterAll(async () => env?.close());

describe('csrsigning', () => {
  it('signs an approved kube-apiserver-client request for the cluster signing duration', async () => {
    await create(
      'alice',
      { commonName: 'alice', organizations: ['team'] },
      'kubernetes.io/kube-apiserver-client',
      ['client auth', 'digital signature'],
    );
    await decide('alice', 'Approved');
    const cert = await certificateOf('alice');
    expect(cert.subject).toBe('O=team\nCN=alice');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    // 2h is short (< 8h): not backdated at the end, so 2h + the 5-minute start backdate.
    expect(lifetime(cert)).toBe(125 * MINUTE);
  });

  it('honours spec.expirationSeconds up to the cluster signing duration (the API refuses under 10 minutes)', async () => {
    await create('short', { commonName: 'short' }, 'kubernetes.io/kube-apiserver-client', ['client auth'], {
      expirationSeconds: 1800,
    });
    await create(
      'at-minimum',
      { commonName: 'at-minimum' },
      'kubernetes.io/kube-apiserver-client',
      ['client auth'],
      {
        expirationSeconds: 600,
      },
    );
    await create(
      'too-long',
      { commonName: 'too-long' },
      'kubernetes.io/kube-apiserver-client',
      ['client auth'],
      {
        expirationSeconds: 86400,
      },
    );
    for (const n of ['short', 'at-minimum', 'too-long']) await decide(n, 'Approved');
    expect(lifetime(await certificateOf('short'))).toBe(35 * MINUTE);
    expect(lifetime(await certificateOf('at-minimum'))).toBe(15 * MINUTE);
    expect(lifetime(await certificateOf('too-long'))).toBe(125 * MINUTE);
  });

  it("clamps a requested lifetime to kube's bounds", () => {
    expect(Authority.duration(120 * MINUTE, undefined)).toBe(120 * MINUTE);
    expect(Authority.duration(120 * MINUTE, 60)).toBe(10 * MINUTE);
    expect(Authority.duration(120 * MINUTE, 3600)).toBe(60 * MINUTE);
    expect(Authority.duration(120 * MINUTE, 86400)).toBe(120 * MINUTE);
  });

  it('signs kubelet serving, kubelet client and legacy-unknown requests with their names and usages', async () => {
    const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] };
    await create(
      'serving',
      node,
      'kubernetes.io/kubelet-serving',
      ['digital signature', 'key encipherment', 'server auth'],
      {
        names: { dnsNames: ['n1.example'], ipAddresses: ['10.1.2.3'] },
      },
    );
    await create('kubelet', node, 'kubernetes.io/kube-apiserver-client-kubelet', [
      'digital signature',
      'client auth',
    ]);
    await create('legacy', { commonName: 'anything' }, 'kubernetes.io/legacy-unknown', [
      'server auth',
      'client auth',
      'code signing',
    ]);
    for (const n of ['serving', 'kubelet', 'legacy']) await decide(n, 'Approved');
    const serving = await certificateOf('serving');
    expect(serving.subjectAltName).toBe('DNS:n1.example, IP Address:10.1.2.3');
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(serving.checkHost('n1.example')).toBe('n1.example');
    const kubelet = await certificateOf('kubelet');
    expect(kubelet.subject).toBe('O=system:nodes\nCN=system:node:n1');
    const legacy = await certificateOf('legacy');
    // Go's order of extended usages: server auth, client auth, code signing.
    expect(legacy.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.3']);
  });

  it("fails requests a signer refuses, with kube's messages", async () => {
    await create('server-usage', { commonName: 'bob' }, 'kubernetes.io/kube-apiserver-client', [
      'client auth',
      'server auth',
    ]);
    await create('no-client-auth', { commonName: 'bob' }, 'kubernetes.io/kube-apiserver-client', [
      'digital signature',
    ]);
    await create(
      'not-nodes',
      { commonName: 'system:node:n2', organizations: ['x'] },
      'kubernetes.io/kube-apiserver-client-kubelet',
      ['digital signature', 'client auth'],
    );
    await create(
      'no-names',
      { commonName: 'system:node:n2', organizations: ['system:nodes'] },
      'kubernetes.io/kubelet-serving',
      ['digital signature', 'server auth'],
    );
    await create(
      'bad-usages',
      { commonName: 'system:node:n2', organizations: ['system:nodes'] },
      'kubernetes.io/kube-apiserver-client-kubelet',
      ['client auth'],
    );
    for (const n of ['server-usage', 'no-client-auth', 'not-nodes', 'no-names', 'bad-usages'])
      await decide(n, 'Approved');
    const expected: Record<string, string> = {
      'server-usage': 'invalid usage for client certificate: server auth',
      'no-client-auth': 'missing required usage for client certificate: client auth',
      'not-nodes': 'subject organization is not system:nodes',
      'no-names': 'DNS or IP subjectAltName is required',
      'bad-usages': 'usages did not match [client auth digital signature key encipherment]',
    };
    for (const [name, message] of Object.entries(expected)) {
      expect(await failureOf(name), name).toMatchObject({
        status: 'True',
        reason: 'SignerValidationFailure',
        message,
      });
      expect((await csrs.get(name)).status?.certificate ?? '', name).toBe('');
    }
  });

  it('leaves unapproved, denied and foreign requests alone', async () => {
    await create('pending', { commonName: 'p' }, 'kubernetes.io/kube-apiserver-client', ['client auth']);
    await create('denied', { commonName: 'd' }, 'kubernetes.io/kube-apiserver-client', ['client auth']);
    await create('foreign', { commonName: 'f' }, 'example.com/signer', ['client auth']);
    await create('marker', { commonName: 'm' }, 'kubernetes.io/kube-apiserver-client', ['client auth']);
    await decide('denied', 'Denied');
    await decide('foreign', 'Approved');
    await decide('marker', 'Approved');
    await certificateOf('marker'); // the controller got past the others
    for (const n of ['pending', 'denied', 'foreign']) {
      const c = await csrs.get(n);
      expect(c.status?.certificate ?? '', n).toBe('');
      expect(
        (c.status?.conditions ?? []).some((x) => x.type === 'Failed'),
        n,
      ).toBe(false);
    }
    expect(env.errors).toEqual([]);
  });

  it('does not start without a CA, and refuses the cluster CA with per-signer files', async () => {
    const run = async (flags: string[]): Promise<string[]> => {
      const parsed = parseControllerManagerArgs(['--leader-elect=false', '--secure-port=0', ...flags]);
      if (parsed.help) throw new Error('unexpected --help');
      const lines: string[] = [];
      const m = startControllerManager({
        clientConfig: loadKubeconfig(env.server.kubeconfigPath),
        options: { ...parsed.options, qps: -1, burst: 0 },
        controllers: [csrSigningController],
        log: {
          info: (l) => lines.push(l),
          warn: (l) => lines.push(l),
          error: (l, e) => lines.push(`${l}: ${e instanceof Error ? e.message : String(e)}`),
        },
      });
      await until('the start', async () => (lines.some((l) => /csr|signing/i.test(l)) ? true : undefined));
      await m.stop();
      return lines;
    };
    const none = await run([]);
    expect(none.join('\n')).toContain('Skipping CSR signer controller because no csr cert/key was specified');
    const both = await run([
      '--cluster-signing-cert-file=/x/ca.crt',
      '--cluster-signing-key-file=/x/ca.key',
      '--cluster-signing-legacy-unknown-cert-file=/x/l.crt',
      '--cluster-signing-legacy-unknown-key-file=/x/l.key',
    ]);
    expect(both.join('\n')).toContain('cannot specify default and per controller certs at the same time');
    const missing = await run([
      '--cluster-signing-kubelet-serving-cert-file=/nonexistent/ca.crt',
      '--cluster-signing-kubelet-serving-key-file=/nonexistent/ca.key',
    ]);
    expect(missing.join('\n')).toContain(
      'failed to start kubernetes.io/kubelet-serving certificate controller',
    );
  });
});
