import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultSpec, faultPlan } from '#local/lambda-faults';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';

/*
 * The webhook delivery function killed (issue 36): its bundle runs as Lambda runs it, invoked
 * asynchronously (Lambda's event queue: a failed invocation is retried twice, then the job goes to
 * the dead-letter queue), and its execution environment dies while the receiver holds the request,
 * or once the delivery is made and recorded. The receiver gets the delivery at least once, every
 * copy under the same `X-GitHub-Delivery` GUID, and the hook's deliveries then show it once, as
 * delivered: no record half-written, none twice, nothing in the dead-letter queue.
 */

const PASSWORD = 'webhook-faults-1';
const faults = faultPlan();

let deployed: AsDeployed;
let token: string;
let receiver: Receiver;

interface Received {
  readonly path: string;
  readonly guid: string;
  readonly event: string;
}

interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** How long the next request of each path is held before its answer (then at once). */
  readonly holdFirstMs: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const holdFirstMs = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({
        path,
        guid: String(req.headers['x-github-delivery']),
        event: String(req.headers['x-github-event']),
      });
      const hold = holdFirstMs.get(path) ?? 0;
      holdFirstMs.delete(path);
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('taken'), hold);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    holdFirstMs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${deployed.stack.baseUrl}${path}`, {
    method,
    headers: { Authorization: `token ${token}`, Accept: 'application/vnd.github+json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

interface DeliveryJson {
  readonly guid: string;
  readonly status_code: number;
  readonly status: string;
  readonly event: string;
  readonly redelivery: boolean;
}

/** A repository with a hook whose ping (sent on creation) meets `spec`; what the receiver and the API saw then. */
async function pingedThrough(repo: string, spec: Omit<FaultSpec, 'fn' | 'match'>) {
  expect((await api('POST', '/user/repos', { name: repo })).status).toBe(201);
  const path = `/${repo}`;
  const fault = faults.inject({
    ...spec,
    fn: 'DeliverWebhook',
    match: (event) => (event as { repo?: string }).repo === repo,
  });
  const created = await api('POST', `/repos/octocat/${repo}/hooks`, {
    config: { url: `${receiver.url}${path}`, content_type: 'json' },
    events: ['push'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const hookId = created.body.id as number;
  const death = await Promise.race([
    fault.died,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 120_000)),
  ]);
  expect(death, `the delivery function never died: ${fault.missed() ?? 'not invoked'}`).toBeDefined();
  // The retry (Lambda's event queue) delivers and records; then a while for any further copy.
  let deliveries: DeliveryJson[] = [];
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    deliveries = (await api('GET', `/repos/octocat/${repo}/hooks/${hookId}/deliveries`)).body;
    if (deliveries.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  deliveries = (await api('GET', `/repos/octocat/${repo}/hooks/${hookId}/deliveries`)).body;
  return { received: receiver.received.filter((entry) => entry.path === path), deliveries, death };
}

beforeAll(async () => {
  deployed = await startAsDeployed({ faults, webhookRetryDelaysMs: [1_000, 2_000] });
  receiver = await startReceiver();
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  token = (await personalToken(deployed.stack.baseUrl, user.auth, ['repo'])).token;
}, 900_000);

afterAll(async () => {
  faults.clear();
  await receiver?.close();
  await deployed?.stop();
});

describe('the webhook delivery function killed', () => {
  it('while the receiver holds the request: delivered again under the same GUID, recorded once', async () => {
    receiver.holdFirstMs.set('/held', 5_000);
    const seen = await pingedThrough('held', {
      when: 'mid-work',
      once: () => receiver.received.some((entry) => entry.path === '/held'),
    });
    const logs = await deployed.logs();
    expect(seen.received.length, logs).toBeGreaterThanOrEqual(2);
    expect(seen.received[0]?.event).toBe('ping');
    expectDeliveredOnce(seen, logs);
  }, 300_000);

  it('after its delivery was made and recorded: the retry finds it delivered, recorded once', async () => {
    const seen = await pingedThrough('answered', { when: 'after-response' });
    const logs = await deployed.logs();
    expect(seen.received.length, logs).toBeGreaterThanOrEqual(1);
    expectDeliveredOnce(seen, logs);
  }, 300_000);
});

/** Every copy under one GUID, one delivery record of it (a 200, not a redelivery), no dead letter. */
function expectDeliveredOnce(seen: Awaited<ReturnType<typeof pingedThrough>>, logs: string): void {
  expect(new Set(seen.received.map((entry) => entry.guid)).size).toBe(1);
  expect(seen.deliveries, logs).toHaveLength(1);
  expect(seen.deliveries[0]).toMatchObject({
    guid: seen.received[0]?.guid,
    event: 'ping',
    status_code: 200,
    redelivery: false,
  });
  expect(deployed.stack.webhookDeadLetters).toEqual([]);
}
