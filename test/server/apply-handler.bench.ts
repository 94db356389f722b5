/**
 * The write path end to end (`app.inject` → handler → in-memory store), on a Deployment with 50
 * containers: a server-side apply that changes one image against a plain PUT of the same change
 * (which now also records its managedFields entry and runs field validation), and a merge patch
 * for reference. Each iteration alternates the image so every request writes.
 * Run: `npx vitest bench test/server/apply-handler.bench.ts --run`.
 */
import { bench, describe } from 'vitest';
import { fiftyContainers } from '../apply/support.js';
import { startResourceApp, type ResourceApp } from './resources.support.js';

const URL = '/apis/apps/v1/namespaces/default/deployments';

function big(name: string, image: string): Record<string, unknown> {
  const containers = fiftyContainers((i) => (i === 25 ? image : 'img:1'));
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: 'web' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
    },
  };
}

let s: ResourceApp;
let n = 0;
const OPTIONS = { time: 2000, warmupIterations: 20 };

async function send(method: 'PUT' | 'PATCH', url: string, type: string, body: unknown): Promise<void> {
  const r = await s.app.inject({
    method,
    url,
    headers: { 'content-type': type },
    payload: JSON.stringify(body),
  });
  if (r.statusCode !== 200) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
}

/** The app with the three objects, created on first use (bench files run no hooks here). */
let ready: Promise<void> | undefined;
function setup(): Promise<void> {
  return (ready ??= (async () => {
    s = await startResourceApp();
    for (const name of ['applied', 'updated', 'patched']) {
      const r = await s.app.inject({
        method: 'PATCH',
        url: `${URL}/${name}?fieldManager=bench`,
        headers: { 'content-type': 'application/apply-patch+yaml' },
        payload: JSON.stringify(big(name, 'img:0')),
      });
      if (r.statusCode !== 201) throw new Error(r.body);
    }
  })());
}

describe('50-container Deployment, one image changed per request', () => {
  bench(
    'server-side apply (apply-patch+yaml)',
    async () => {
      await setup();
      await send(
        'PATCH',
        `${URL}/applied?fieldManager=bench`,
        'application/apply-patch+yaml',
        big('applied', `img:${++n}`),
      );
    },
    OPTIONS,
  );
  bench(
    'plain update (PUT, Update entry)',
    async () => {
      await setup();
      await send(
        'PUT',
        `${URL}/updated?fieldManager=bench`,
        'application/json',
        big('updated', `img:${++n}`),
      );
    },
    OPTIONS,
  );
  bench(
    'merge patch of the image (reference)',
    async () => {
      await setup();
      const containers = [...Array(50).keys()].map((i) => ({
        name: `c${i}`,
        image: i === 25 ? `img:${++n}` : 'img:1',
      }));
      await send('PATCH', `${URL}/patched?fieldManager=bench`, 'application/strategic-merge-patch+json', {
        spec: { template: { spec: { containers } } },
      });
    },
    OPTIONS,
  );
});
