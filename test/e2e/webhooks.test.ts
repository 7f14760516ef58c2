import { mkdtemp } from 'node:fs/promises';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Octokit as OctokitClient } from '@octokit/rest';
import { Webhooks } from '@octokit/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDelivery, getWebhook, readDeliveries, replaceWebhook } from '#data/webhooks';
import { REDELIVERIES_PER_WINDOW, REDELIVERY_WINDOW_SECONDS } from '#domain/webhooks';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { selfSignedCertificate } from '#test/tls-front';

/**
 * Repository webhooks end to end: the hooks API driven by the real `@octokit/rest` (16.43.2; its
 * generic `request` for the delivery routes it predates), and a receiver on 127.0.0.1 that checks
 * every signature with `@octokit/webhooks`' `verify`. Deliveries leave through the local stand-in
 * of Lambda's asynchronous invocation, as they leave the request in AWS.
 */
const requireFromHere = createRequire(import.meta.url);
const { Octokit } = requireFromHere('@octokit/rest') as typeof import('@octokit/rest');
// biome-ignore lint/suspicious/noExplicitAny: Octokit v16 types these responses loosely; the assertions say what they must be
type Body = any;

const SECRET = 'It’s a Secret to Everybody';
const verifier = new Webhooks({ secret: SECRET });

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A receiver that records every request and answers with the next queued status (200 when none),
 * after the answer's delay if it has one. Over https with `tls` (a certificate nobody trusts).
 */
class Receiver {
  readonly received: Received[] = [];
  readonly answers: Array<{ status: number; headers?: Record<string, string>; delayMs?: number }> = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly tls?: { readonly key: Buffer; readonly cert: Buffer }) {}

  async start(): Promise<void> {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        const answer = this.answers.shift() ?? { status: 200 };
        setTimeout(() => {
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          res.end(`thanks ${answer.status}`);
        }, answer.delayMs ?? 0);
      });
    };
    const server = this.tls ? createHttpsServer(this.tls, listener) : createServer(listener);
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `${this.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async next(predicate: (request: Received) => boolean, timeoutMs = 15_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.received.find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(
      `nothing received; got ${this.received.map((r) => r.headers['x-github-event']).join(', ')}`,
    );
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

let stack: Awaited<ReturnType<typeof startTestStack>>;
let octokit: OctokitClient;
let origin: OriginServer;
const receiver = new Receiver();
let secureReceiver: Receiver;
let octocat: Awaited<ReturnType<typeof createUser>>;

const eventOf = (request: Received) => request.headers['x-github-event'];
const payloadOf = (request: Received): Body =>
  request.headers['content-type'] === 'application/x-www-form-urlencoded'
    ? JSON.parse(new URLSearchParams(request.body).get('payload') ?? '')
    : JSON.parse(request.body);

async function verified(request: Received): Promise<boolean> {
  return verifier.verify(request.body, String(request.headers['x-hub-signature-256']));
}

/** The hook's deliveries once `count` are recorded (a delivery is recorded after its receiver answered). */
async function deliveriesOf(repo: string, hookId: number, count: number): Promise<Body[]> {
  return deliveriesWhen(repo, hookId, (deliveries) => deliveries.length >= count);
}

/** The hook's deliveries (the first 100) once `done` holds of them, or after 15 s. */
async function deliveriesWhen(
  repo: string,
  hookId: number,
  done: (deliveries: Body[]) => boolean,
): Promise<Body[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { data } = await octokit.request('GET /repos/:owner/:repo/hooks/:hook_id/deliveries', {
      owner: 'octocat',
      repo,
      hook_id: hookId,
      per_page: 100,
    });
    if (done(data as Body[]) || Date.now() > deadline) return data as Body[];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryDelaysMs: [200, 200] });
  await receiver.start();
  secureReceiver = new Receiver(await selfSignedCertificate('127.0.0.1', 'IP:127.0.0.1'));
  await secureReceiver.start();
  const root = await mkdtemp(join(tmpdir(), 'webhook-origins-'));
  await makeFixtureRepository(join(root, 'small.git'), { commits: 3, branches: 1, annotatedTags: 0 });
  origin = await serveGitHttp(root);
  octocat = await createUser(stack.endpointsFile, 'octocat');
  await createUser(stack.endpointsFile, 'hubot');
  octokit = new Octokit({
    baseUrl: stack.baseUrl,
    auth: { username: octocat.login, password: octocat.password, on2fa: async () => '' },
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: console.error },
  });
  for (const name of [
    'hooked',
    'redelivered',
    'imported',
    'retried',
    'guarded',
    'failing',
    'paged',
    'purged',
    'tls',
  ])
    await octokit.repos.createForAuthenticatedUser({ name });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver.stop();
  await secureReceiver?.stop();
  await origin?.close();
});

describe('repository webhooks', () => {
  it('creates, reads, edits, pings and deletes a hook; each delivery is signed and recorded', async () => {
    const created = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'hooked',
      config: { url: `${receiver.url}/hooked`, content_type: 'json', secret: SECRET },
      events: ['repository_import'],
    });
    expect(created.status).toBe(201);
    const hook = created.data as Body;
    expect(hook).toMatchObject({
      type: 'Repository',
      name: 'web',
      active: true,
      events: ['repository_import'],
      config: { url: `${receiver.url}/hooked`, content_type: 'json', insecure_ssl: '0', secret: '********' },
      last_response: { code: null, status: 'unused', message: null },
      ping_url: `${stack.baseUrl}/repos/octocat/hooked/hooks/${hook.id}/pings`,
    });

    // The ping on creation, as GitHub sends it.
    const ping = await receiver.next((r) => r.path === '/hooked' && eventOf(r) === 'ping');
    expect(await verified(ping)).toBe(true);
    expect(ping.headers['x-github-hook-id']).toBe(String(hook.id));
    expect(ping.headers['x-github-delivery']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(ping.headers['user-agent']).toMatch(/^GitHub-Hookshot\/[0-9a-f]+$/);
    expect(ping.headers['content-type']).toBe('application/json');
    expect(JSON.parse(ping.body)).toMatchObject({
      hook_id: hook.id,
      hook: { id: hook.id, config: { secret: '********' } },
      repository: { full_name: 'octocat/hooked' },
      sender: { login: 'octocat' },
    });
    expect(ping.body).not.toContain(SECRET);

    expect((await octokit.repos.listHooks({ owner: 'octocat', repo: 'hooked' })).data).toHaveLength(1);
    const edited = await octokit.repos.updateHook({
      owner: 'octocat',
      repo: 'hooked',
      hook_id: hook.id,
      add_events: ['push'],
      config: { url: `${receiver.url}/hooked`, content_type: 'form' },
    });
    expect(edited.data).toMatchObject({
      events: ['repository_import', 'push'],
      config: { content_type: 'form', secret: '********' },
    });

    // A ping by hand, now as a form: `payload=<json>`, signed over the exact form body.
    expect(
      (await octokit.repos.pingHook({ owner: 'octocat', repo: 'hooked', hook_id: hook.id })).status,
    ).toBe(204);
    const formPing = await receiver.next(
      (r) => r.path === '/hooked' && r.headers['content-type'] === 'application/x-www-form-urlencoded',
    );
    expect(await verified(formPing)).toBe(true);
    expect(payloadOf(formPing).hook_id).toBe(hook.id);

    const deliveries = await deliveriesOf('hooked', hook.id, 2);
    expect(deliveries.map((d) => [d.event, d.status, d.status_code, d.redelivery])).toEqual([
      ['ping', 'OK', 200, false],
      ['ping', 'OK', 200, false],
    ]);
    const { data: one } = await octokit.request(
      'GET /repos/:owner/:repo/hooks/:hook_id/deliveries/:delivery_id',
      {
        owner: 'octocat',
        repo: 'hooked',
        hook_id: hook.id,
        delivery_id: deliveries[0].id,
      },
    );
    expect(one).toMatchObject({
      guid: formPing.headers['x-github-delivery'],
      url: `${receiver.url}/hooked`,
      request: { headers: { 'X-GitHub-Event': 'ping' } },
      response: { payload: 'thanks 200' },
    });
    expect(JSON.stringify(one)).not.toContain(SECRET);
    expect(
      (await octokit.repos.getHook({ owner: 'octocat', repo: 'hooked', hook_id: hook.id })).data,
    ).toMatchObject({
      last_response: { code: 200, status: 'active', message: 'OK' },
    });

    // Redelivery: the same GUID and payload again, flagged.
    const redelivered = await octokit.request(
      'POST /repos/:owner/:repo/hooks/:hook_id/deliveries/:delivery_id/attempts',
      { owner: 'octocat', repo: 'hooked', hook_id: hook.id, delivery_id: deliveries[0].id },
    );
    expect(redelivered.status).toBe(202);
    const again = await deliveriesOf('hooked', hook.id, 3);
    expect(again[0]).toMatchObject({
      guid: formPing.headers['x-github-delivery'],
      redelivery: true,
      status: 'OK',
    });
    expect(
      receiver.received.filter(
        (r) => r.headers['x-github-delivery'] === formPing.headers['x-github-delivery'],
      ),
    ).toHaveLength(2);

    await octokit.repos.deleteHook({ owner: 'octocat', repo: 'hooked', hook_id: hook.id });
    await expect(
      octokit.repos.getHook({ owner: 'octocat', repo: 'hooked', hook_id: hook.id }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('limits redeliveries per hook: 429 with a secondary-rate-limit body and Retry-After past the limit', async () => {
    const hooks = `${stack.baseUrl}/repos/octocat/redelivered/hooks`;
    const { data: hook } = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'redelivered',
      config: { url: `${receiver.url}/redelivered`, content_type: 'json' },
    });
    const { data: other } = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'redelivered',
      config: { url: `${receiver.url}/redelivered-other`, content_type: 'json' },
    });
    const [first] = await deliveriesOf('redelivered', hook.id, 1);
    const [otherFirst] = await deliveriesOf('redelivered', other.id, 1);
    const redeliver = (hookId: number, deliveryId: number) =>
      fetch(`${hooks}/${hookId}/deliveries/${deliveryId}/attempts`, {
        method: 'POST',
        headers: { Authorization: octocat.auth },
      });
    const statuses: number[] = [];
    for (let i = 0; i < REDELIVERIES_PER_WINDOW; i++)
      statuses.push((await redeliver(hook.id, first.id)).status);
    expect(statuses.every((status) => status === 202)).toBe(true);

    const refused = await redeliver(hook.id, first.id);

    expect(refused.status).toBe(429);
    const body = await json(refused);
    expect(body.message).toMatch(/redeliveries of this hook/);
    expect(body.message).toMatch(new RegExp(`${REDELIVERIES_PER_WINDOW} `));
    expect(body.documentation_url).toMatch(/rate-limits/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(REDELIVERY_WINDOW_SECONDS);
    // An unknown delivery is still 404, and another hook has its own allowance.
    expect((await redeliver(hook.id, 999_999_999)).status).toBe(404);
    expect((await redeliver(other.id, otherFirst.id)).status).toBe(202);
  });

  it('enforces the hook scopes and answers 404 to anyone but the owner', async () => {
    const hooks = `${stack.baseUrl}/repos/octocat/hooked/hooks`;
    const read = await personalToken(stack.baseUrl, octocat.auth, ['read:repo_hook']);
    const write = await personalToken(stack.baseUrl, octocat.auth, ['write:repo_hook']);
    const other = await personalToken(stack.baseUrl, octocat.auth, ['public_repo']);
    const body = JSON.stringify({ config: { url: `${receiver.url}/scoped` } });
    const call = (token: string, method: string, url = hooks, content?: string) =>
      fetch(url, {
        method,
        headers: { Authorization: `token ${token}` },
        ...(content ? { body: content } : {}),
      });

    expect((await call(read.token, 'GET')).status).toBe(200);
    expect((await call(read.token, 'POST', hooks, body)).status).toBe(404);
    expect((await call(other.token, 'GET')).status).toBe(404);
    const created = await call(write.token, 'POST', hooks, body);
    expect(created.status).toBe(201);
    const hook = await json(created);
    expect(created.headers.get('x-accepted-oauth-scopes')).toBe('write:repo_hook, repo');
    expect((await call(write.token, 'DELETE', `${hooks}/${hook.id}`)).status).toBe(404);
    const admin = await personalToken(stack.baseUrl, octocat.auth, ['admin:repo_hook']);
    expect((await call(admin.token, 'DELETE', `${hooks}/${hook.id}`)).status).toBe(204);

    const hubot = `Basic ${Buffer.from('hubot:hubot-pass-1').toString('base64')}`;
    expect((await fetch(hooks, { headers: { Authorization: hubot } })).status).toBe(404);
  });

  it('refuses bad input with 422 in GitHub’s error shape', async () => {
    const hooks = `${stack.baseUrl}/repos/octocat/hooked/hooks`;
    const post = async (body: unknown) => {
      const response = await fetch(hooks, {
        method: 'POST',
        headers: { Authorization: octocat.auth },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await json(response) };
    };
    expect(await post({ config: {} })).toMatchObject({
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ resource: 'Hook', field: 'config.url', code: 'missing_field' }],
      },
    });
    expect(await post({ config: { url: 'ftp://example.com/' } })).toMatchObject({
      status: 422,
      body: { errors: [{ field: 'url', code: 'custom' }] },
    });
    expect(await post({ config: { url: `${receiver.url}/x`, content_type: 'xml' } })).toMatchObject({
      status: 422,
    });
    expect(await post({ config: { url: `${receiver.url}/x` }, events: ['Not An Event'] })).toMatchObject({
      status: 422,
    });
  });

  it('refuses a private or metadata address when the hook is made and again at delivery', async () => {
    const hooks = `${stack.baseUrl}/repos/octocat/guarded/hooks`;
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.1.2.3/hook',
      'http://[fd00::1]/',
    ]) {
      const response = await fetch(hooks, {
        method: 'POST',
        headers: { Authorization: octocat.auth },
        body: JSON.stringify({ config: { url } }),
      });
      expect(response.status, url).toBe(422);
      expect((await json(response)).errors[0].message).toContain('may not reach');
    }

    // A stored URL that now points somewhere forbidden (as a name that changed its address would):
    // the delivery is refused before any packet and recorded, and not retried.
    const created = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'guarded',
      config: { url: `${receiver.url}/guarded` },
    });
    const id = (created.data as Body).id;
    await deliveriesOf('guarded', id, 1);
    const stored = await getWebhook('octocat', 'guarded', id);
    if (!stored) throw new Error('hook not stored');
    await replaceWebhook({ ...stored, url: 'http://169.254.169.254/latest/meta-data/' });
    await octokit.repos.pingHook({ owner: 'octocat', repo: 'guarded', hook_id: id });
    const [refused] = await deliveriesOf('guarded', id, 2);
    expect(refused).toMatchObject({ status_code: 0, status: expect.stringContaining('may not reach') });
  });

  it('retries a failed delivery with backoff and never follows a redirect', async () => {
    receiver.answers.push({ status: 302, headers: { location: '/elsewhere' } }, { status: 503 });
    const created = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'retried',
      config: { url: `${receiver.url}/retried`, content_type: 'json' },
    });
    const id = (created.data as Body).id;
    const deliveries = await deliveriesOf('retried', id, 3);
    expect(deliveries.map((d) => d.status).reverse()).toEqual([
      'Invalid HTTP Response: 302',
      'Invalid HTTP Response: 503',
      'OK',
    ]);
    expect(new Set(deliveries.map((d) => d.guid)).size).toBe(1);
    expect(receiver.received.some((r) => r.path === '/elsewhere')).toBe(false);
  });

  it('pages deliveries newest first by cursor, and Octokit’s paginate walks every page', async () => {
    const created = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'paged',
      config: { url: `${receiver.url}/paged`, content_type: 'json' },
    });
    const id = (created.data as Body).id;
    for (let n = 0; n < 6; n++)
      await octokit.repos.pingHook({ owner: 'octocat', repo: 'paged', hook_id: id });
    const all = await deliveriesOf('paged', id, 7);
    expect(all).toHaveLength(7);
    const ids = all.map((delivery) => delivery.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);

    const walked: Body[] = await octokit.paginate('GET /repos/:owner/:repo/hooks/:hook_id/deliveries', {
      owner: 'octocat',
      repo: 'paged',
      hook_id: id,
      per_page: 2,
    });
    expect(walked.map((delivery) => delivery.id)).toEqual(ids);

    // The links: `next` (with `per_page` and an opaque cursor) from the first page; `next` and
    // `prev` from the second; back from there by `prev` is the first page again.
    const url = `${stack.baseUrl}/repos/octocat/paged/hooks/${id}/deliveries`;
    const page = async (href: string) => {
      const response = await fetch(href, { headers: { Authorization: octocat.auth } });
      expect(response.status).toBe(200);
      const links = Object.fromEntries(
        [...(response.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [
          m[2],
          m[1],
        ]),
      );
      return { ids: ((await response.json()) as Body[]).map((d) => d.id), links };
    };
    const first = await page(`${url}?per_page=3`);
    expect(first.ids).toEqual(ids.slice(0, 3));
    expect(Object.keys(first.links)).toEqual(['next']);
    const next = new URL(first.links.next ?? '');
    expect(next.searchParams.get('per_page')).toBe('3');
    expect(next.searchParams.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await page(first.links.next ?? '');
    expect(second.ids).toEqual(ids.slice(3, 6));
    expect(Object.keys(second.links)).toEqual(['next', 'prev']);
    expect((await page(second.links.prev ?? '')).ids).toEqual(ids.slice(0, 3));
    const last = await page(second.links.next ?? '');
    expect(last.ids).toEqual(ids.slice(6));
    expect(Object.keys(last.links)).toEqual(['prev']);

    for (const cursor of ['nonsense!', 'bm9uc2Vuc2U', Buffer.from('after:-1').toString('base64url')]) {
      const response = await fetch(`${url}?cursor=${encodeURIComponent(cursor)}`, {
        headers: { Authorization: octocat.auth },
      });
      expect(response.status, cursor).toBe(422);
      expect(await json(response)).toMatchObject({
        message: 'Validation Failed',
        errors: [{ resource: 'HookDelivery', field: 'cursor', code: 'invalid' }],
      });
    }
  });

  it('honours insecure_ssl: a certificate that does not verify fails with "0" and is accepted with "1"', async () => {
    const config = { url: `${secureReceiver.url}/tls`, content_type: 'json', insecure_ssl: '0' };
    const created = await octokit.repos.createHook({ owner: 'octocat', repo: 'tls', config });
    const id = (created.data as Body).id;
    // The ping on creation and its two retries, each refused by the TLS handshake.
    const refused = await deliveriesOf('tls', id, 3);
    expect(refused.map((d) => [d.status_code, d.status])).toEqual(
      Array(3).fill([0, expect.stringMatching(/certificate/)]),
    );
    expect(secureReceiver.received).toHaveLength(0);

    const edited = await octokit.repos.updateHook({
      owner: 'octocat',
      repo: 'tls',
      hook_id: id,
      config: { ...config, insecure_ssl: '1' },
    });
    expect((edited.data as Body).config.insecure_ssl).toBe('1');
    await octokit.repos.pingHook({ owner: 'octocat', repo: 'tls', hook_id: id });
    const ping = await secureReceiver.next((r) => r.path === '/tls' && eventOf(r) === 'ping');
    expect(payloadOf(ping).hook_id).toBe(id);
    const [delivered] = await deliveriesWhen('tls', id, ([newest]) => newest?.status === 'OK');
    expect(delivered).toMatchObject({ status: 'OK', status_code: 200, event: 'ping' });
  });

  it('deletes a hook’s deliveries with the hook, and a delivery under way then records nothing', async () => {
    const created = await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'purged',
      config: { url: `${receiver.url}/purged`, content_type: 'json' },
    });
    const id = (created.data as Body).id;
    await octokit.repos.pingHook({ owner: 'octocat', repo: 'purged', hook_id: id });
    const recorded = await deliveriesOf('purged', id, 2);
    expect(recorded).toHaveLength(2);

    // A ping whose receiver answers only after the hook is deleted.
    receiver.answers.push({ status: 200, delayMs: 1000 });
    const pings = receiver.received.filter((r) => r.path === '/purged').length;
    await octokit.repos.pingHook({ owner: 'octocat', repo: 'purged', hook_id: id });
    await receiver.next(() => receiver.received.filter((r) => r.path === '/purged').length > pings);
    await octokit.repos.deleteHook({ owner: 'octocat', repo: 'purged', hook_id: id });

    for (const delivery of recorded)
      expect(await getDelivery('octocat', 'purged', id, delivery.id)).toBeUndefined();
    // Nothing of the hook's is stored, then or once the late answer came (2 s).
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline) {
      expect((await readDeliveries('octocat', 'purged', id, undefined, 100)).items).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('sends repository_import with status success when an import completes', async () => {
    await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'imported',
      config: { url: `${receiver.url}/imported`, content_type: 'json', secret: SECRET },
      events: ['repository_import'],
    });
    const started = await fetch(`${stack.baseUrl}/repos/octocat/imported/import`, {
      method: 'PUT',
      headers: { Authorization: octocat.auth, Accept: 'application/vnd.github.barred-rock-preview+json' },
      body: JSON.stringify({ vcs: 'git', vcs_url: `${origin.url}/small.git` }),
    });
    expect(started.status).toBe(201);
    const event = await receiver.next(
      (r) => r.path === '/imported' && eventOf(r) === 'repository_import',
      60_000,
    );
    expect(await verified(event)).toBe(true);
    expect(JSON.parse(event.body)).toMatchObject({
      status: 'success',
      repository: { name: 'imported', full_name: 'octocat/imported', owner: { login: 'octocat' } },
      sender: { login: 'octocat', type: 'User' },
    });
  }, 90_000);

  it('sends repository_import with status failure when an import fails, and cancelled when it is cancelled', async () => {
    await octokit.repos.createHook({
      owner: 'octocat',
      repo: 'failing',
      config: { url: `${receiver.url}/failing`, content_type: 'json', secret: SECRET },
      events: ['*'],
    });
    const importUrl = `${stack.baseUrl}/repos/octocat/failing/import`;
    const headers = {
      Authorization: octocat.auth,
      Accept: 'application/vnd.github.barred-rock-preview+json',
    };
    const start = (path: string) =>
      fetch(importUrl, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ vcs: 'git', vcs_url: `${origin.url}/${path}` }),
      });
    expect((await start('missing.git')).status).toBe(201);
    const failed = await receiver.next(
      (r) => r.path === '/failing' && eventOf(r) === 'repository_import',
      60_000,
    );
    expect(await verified(failed)).toBe(true);
    expect(JSON.parse(failed.body)).toMatchObject({
      status: 'failure',
      repository: { full_name: 'octocat/failing' },
    });

    expect((await fetch(importUrl, { method: 'DELETE', headers })).status).toBe(204);
    const cancelled = await receiver.next(
      (r) =>
        r.path === '/failing' && eventOf(r) === 'repository_import' && payloadOf(r).status === 'cancelled',
    );
    expect(await verified(cancelled)).toBe(true);
  }, 90_000);
});
