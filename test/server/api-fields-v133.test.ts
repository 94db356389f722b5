/**
 * The served types are kube v1.33's: fields that later releases added are unknown fields here,
 * refused under strict field validation (named in the body's order) and dropped otherwise, as
 * kube-apiserver v1.33.13 answered the same requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startResourceApp, type ResourceApp } from './resources.support.js';

const POD = {
  metadata: { name: 'later' },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'busybox',
        restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
        env: [{ name: 'X', valueFrom: { fileKeyRef: { path: 'a', key: 'b', volumeName: 'v' } } }],
      },
    ],
    hostnameOverride: 'h',
    volumes: [{ name: 'v', projected: { sources: [{ podCertificate: { signerName: 'a.b/c' } }] } }],
  },
};

describe('fields of later Kubernetes releases', () => {
  let s: ResourceApp;
  beforeAll(async () => {
    s = await startResourceApp();
  });
  afterAll(async () => {
    await s.close();
  });

  it('are unknown fields: a strict create is refused, naming each', async () => {
    const r = await s.request(json('POST', '/api/v1/namespaces/default/pods?fieldValidation=Strict', POD));
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].restartPolicyRules", unknown field "spec.containers[0].env[0].valueFrom.fileKeyRef", unknown field "spec.hostnameOverride", unknown field "spec.volumes[0].projected.sources[0].podCertificate"',
    );
  });

  it('are dropped from what is stored otherwise', async () => {
    // Without the env var, which is invalid once its only source is dropped (as in kube).
    const container = { ...POD.spec.containers[0], env: [] };
    const pod = { ...POD, spec: { ...POD.spec, containers: [container] } };
    const r = await s.request(json('POST', '/api/v1/namespaces/default/pods?fieldValidation=Ignore', pod));
    expect(r.statusCode, r.body).toBe(201);
    const stored = JSON.stringify(
      (await s.request(json('GET', '/api/v1/namespaces/default/pods/later'))).json(),
    );
    for (const field of ['restartPolicyRules', 'hostnameOverride', 'podCertificate']) {
      expect(stored).not.toContain(field);
    }
  });
});
