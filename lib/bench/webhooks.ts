import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { median, ms } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';

/*
 * What a webhook costs (issue 28), in alternating rounds on one local stack: the API's answer to
 * `POST …/pings` (it only queues the delivery) against a plain `GET …/hooks/{id}`; and the time
 * from sending the ping to the receiver on 127.0.0.1 having the signed delivery, against the
 * bench process posting the same kind of body to the receiver itself (the floor of one POST).
 */

export interface WebhooksResult {
  readonly rounds: number;
  readonly getMs: number;
  readonly pingMs: number;
  readonly deliveredMs: number;
  readonly directMs: number;
}

export async function measureWebhooks(rounds: number): Promise<WebhooksResult> {
  const { stack, endpointsFile, stop } = await startBenchStack('webhooks');
  const waiting: Array<() => void> = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.end('ok');
      waiting.shift()?.();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    // A token, as clients call: Basic would time the password hash, not the hooks.
    const made = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['admin:repo_hook', 'public_repo'], note: 'bench' }),
    });
    const auth = `token ${((await made.json()) as { token: string }).token}`;
    const api = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: auth },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    await api('/user/repos', 'POST', { name: 'hooked' });
    const received = () => new Promise<void>((resolve) => waiting.push(resolve));
    const first = received();
    const created = await api('/repos/bench/hooked/hooks', 'POST', {
      config: { url, content_type: 'json', secret: 'bench-secret' },
    });
    if (created.status !== 201) throw new Error(`hook: ${created.status}`);
    const { id } = (await created.json()) as { id: number };
    await first;
    const hook = `/repos/bench/hooked/hooks/${id}`;
    const get = async () => {
      const started = performance.now();
      const response = await api(hook);
      await response.arrayBuffer();
      return performance.now() - started;
    };
    const ping = async () => {
      const arrived = received();
      const started = performance.now();
      const response = await api(`${hook}/pings`, 'POST');
      const answered = performance.now() - started;
      if (response.status !== 204) throw new Error(`ping: ${response.status}`);
      await arrived;
      return { answered, delivered: performance.now() - started };
    };
    const body = JSON.stringify({ zen: 'Design for failure.', hook_id: id, padding: 'x'.repeat(3000) });
    const direct = async () => {
      const arrived = received();
      const started = performance.now();
      const response = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await response.arrayBuffer();
      await arrived;
      return performance.now() - started;
    };
    for (let i = 0; i < 5; i++) {
      await get();
      await ping();
      await direct();
    }
    const gets: number[] = [];
    const pings: number[] = [];
    const deliveries: number[] = [];
    const directs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating order, so a change in the machine's load falls on each.
      const steps = [
        async () => gets.push(await get()),
        async () => {
          const result = await ping();
          pings.push(result.answered);
          deliveries.push(result.delivered);
        },
        async () => directs.push(await direct()),
      ];
      for (const step of round % 2 === 0 ? steps : steps.reverse()) await step();
    }
    return {
      rounds,
      getMs: median(gets),
      pingMs: median(pings),
      deliveredMs: median(deliveries),
      directMs: median(directs),
    };
  } finally {
    await stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

export function webhooksReport(result: WebhooksResult, machine: string): string {
  return `Measured ${machine}: ${result.rounds} alternating rounds on one local stack (token auth, in-process handlers, DynamoDB Local, the local stand-in of Lambda's asynchronous invocation), a receiver on 127.0.0.1 answering at once. "Delivered" runs from sending \`POST …/pings\` to the receiver having the signed delivery; the direct POST is the bench process posting a body of the same size to the receiver itself.

| Measure | median | ratio |
|---|---|---|
| \`GET …/hooks/{id}\` | ${ms(result.getMs)} | 1.00 |
| \`POST …/pings\` answered (the delivery queued) | ${ms(result.pingMs)} | ${(result.pingMs / result.getMs).toFixed(2)} |
| ping delivered to the receiver | ${ms(result.deliveredMs)} | ${(result.deliveredMs / result.getMs).toFixed(2)} |
| direct POST to the receiver | ${ms(result.directMs)} | ${(result.directMs / result.getMs).toFixed(2)} |`;
}
