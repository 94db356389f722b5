/**
 * The README's "Adding users" recipes, run as written (openssl and kubectl config) against a
 * server whose cluster CA is the test's `.capstan/pki`: a certificate signed by the cluster CA
 * and a token from the token file each authenticate through their own kubeconfig.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlPath, startTestServer, type TestServer } from '../support/server.js';

const run = promisify(execFile);
const KUBECTL = kubectlPath('1.33');
if (KUBECTL === undefined && process.env['CI'] === 'true')
  throw new Error('kubectl 1.33 is missing (CI=true)');

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-readme-users-'));
  await mkdir(join(dir, '.capstan'));
  await writeFile(
    join(dir, '.capstan/tokens.csv'),
    '0123456789abcdef0123456789abcdef,alice,alice-uid,"dev,ops"\n',
  );
  server = await startTestServer({
    certDir: join(dir, '.capstan/pki'),
    args: [`--token-auth-file=${join(dir, '.capstan/tokens.csv')}`],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function sh(script: string): Promise<string> {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, 'kubectl'), `#!/bin/sh\nexec ${KUBECTL as string} "$@"\n`, { mode: 0o755 });
  const { stdout } = await run(
    'bash',
    ['-euo', 'pipefail', '-c', script.replaceAll('https://127.0.0.1:6443', server.url)],
    {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, KUBECONFIG: '' },
    },
  );
  return stdout;
}

describe.skipIf(KUBECTL === undefined)('README: adding users', () => {
  it('a client certificate signed with the cluster CA by openssl', async () => {
    const out = await sh(`
openssl ecparam -name prime256v1 -genkey -noout -out bob.key
openssl req -new -key bob.key -subj "/CN=bob/O=dev" -out bob.csr
openssl x509 -req -in bob.csr -CA .capstan/pki/ca.crt -CAkey .capstan/pki/ca.key \\
  -CAcreateserial -days 365 -out bob.crt \\
  -extfile <(printf "keyUsage=critical,digitalSignature\\nextendedKeyUsage=clientAuth") 2>/dev/null
k="kubectl --kubeconfig .capstan/bob.kubeconfig"
$k config set-cluster capstan --server=https://127.0.0.1:6443 \\
  --certificate-authority=.capstan/pki/ca.crt --embed-certs >/dev/null
$k config set-credentials bob --client-certificate=bob.crt --client-key=bob.key --embed-certs >/dev/null
$k config set-context bob --cluster=capstan --user=bob >/dev/null && $k config use-context bob >/dev/null
$k auth whoami -o json
`);
    expect(JSON.parse(out)).toMatchObject({
      status: { userInfo: { username: 'bob', groups: ['dev', 'system:authenticated'] } },
    });
  }, 30_000);

  it('a token from the token file', async () => {
    const out = await sh(`
k="kubectl --kubeconfig .capstan/alice.kubeconfig"
$k config set-cluster capstan --server=https://127.0.0.1:6443 \\
  --certificate-authority=.capstan/pki/ca.crt --embed-certs >/dev/null
$k config set-credentials alice --token="$(cut -d, -f1 .capstan/tokens.csv)" >/dev/null
$k config set-context alice --cluster=capstan --user=alice >/dev/null && $k config use-context alice >/dev/null
$k auth whoami -o json
`);
    expect(JSON.parse(out)).toMatchObject({ status: { userInfo: { username: 'alice', uid: 'alice-uid' } } });
  }, 30_000);
});
