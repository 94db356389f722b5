/**
 * Admission on CONNECT: `pods/exec`, `pods/attach` and `pods/portforward` pass the admission
 * chain before the server connects to the agent, so a ValidatingAdmissionPolicy whose rules
 * name CONNECT of `pods/exec` refuses exec and leaves attach alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, type AdminTls } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('admission on CONNECT', () => {
  let server: TestServer;
  let tls: AdminTls;
  const api = (path: string, method = 'GET', body?: unknown) =>
    adminJson(`${server.url}${path}`, tls, method, body);

  beforeAll(async () => {
    server = await startTestServer();
    tls = adminTls(server.kubeconfigPath);
    expect(
      (
        await api('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', 'POST', {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: 'no-exec' },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] },
              ],
            },
            validations: [{ expression: 'false', message: 'exec is not allowed here' }],
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await api('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', 'POST', {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: 'no-exec-b' },
          spec: { policyName: 'no-exec', validationActions: ['Deny'] },
        })
      ).status,
    ).toBe(201);
    const deadline = Date.now() + 20_000;
    while ((await api('/api/v1/namespaces/default/serviceaccounts/default')).status !== 200) {
      if (Date.now() > deadline) throw new Error('no default ServiceAccount');
      await new Promise((r) => setTimeout(r, 100));
    }
    const pod = await api('/api/v1/namespaces/default/pods', 'POST', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { nodeName: 'ghost', containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(pod.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('refuses exec by policy before connecting, and lets attach through', async () => {
    const deadline = Date.now() + 20_000;
    let exec = await api('/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true', 'POST');
    while (!String(exec.json['message']).includes('exec is not allowed here') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      exec = await api('/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true', 'POST');
    }
    expect(exec.status).toBe(422);
    expect(String(exec.json['message'])).toContain(
      "ValidatingAdmissionPolicy 'no-exec' with binding 'no-exec-b' denied request: exec is not allowed here",
    );
    const attach = await api('/api/v1/namespaces/default/pods/p/attach?stdout=true', 'POST');
    expect(String(attach.json['message'])).not.toContain('not allowed here');
    // Past admission: the pod's node does not exist.
    expect(attach.status).toBe(404);
    expect(String(attach.json['message'])).toBe('nodes "ghost" not found');
  }, 30_000);
});
