import { mkdtemp } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeholderOf } from '#cdk/workflow-tasks';
import { type RecordedEvent, recordedEvents } from '#local/event-bus';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { importStateMachine } from '#local/import-workflow';
import type { LocalStateMachine } from '#local/step-functions';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * A step whose worker dies after its work is done (it wrote its status and announced it) but before
 * its answer reaches Step Functions is run again by the workflow's Retry. Receivers must be able
 * to drop what the re-run announces again: each status change on the default event bus, and each
 * `repository_import` delivery, carries one identity however often it is sent.
 *
 * The dead worker's answer is lost as Lambda reports a runtime killed after its work
 * (`Runtime.ExitError`), which every Task retries.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let origin: OriginServer;
let receiver: Server;
let receiverUrl: string;
const deliveries: { guid: string; event: string; body: Record<string, unknown> }[] = [];

/** The steps whose first run dies after its work, once per repository. */
const DYING = ['Detect', 'RewriteHistory', 'Complete', 'RecordFailure'];
const died = new Set<string>();

function dyingAfterWork(machine: LocalStateMachine): LocalStateMachine {
  const tasks = { ...machine.tasks };
  for (const step of DYING) {
    const run = tasks[placeholderOf(step)];
    if (!run) throw new Error(`no task ${step}`);
    tasks[placeholderOf(step)] = async (input) => {
      const output = await run(input);
      const key = `${step}:${(input as { repo: string }).repo}`;
      if (died.has(key)) return output;
      died.add(key);
      const lost = new Error('The answer of a worker that died after its work');
      lost.name = 'Runtime.ExitError';
      throw lost;
    };
  }
  return { ...machine, tasks };
}

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`not done: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

const eventsOf = async (repo: string): Promise<RecordedEvent[]> =>
  (await recordedEvents(stack.eventsFile)).filter((event) => event.detail.repo === repo);

/** Each status change (previous → status) and the identities it was announced under. */
function identitiesByChange(events: readonly RecordedEvent[]): Map<string, Set<unknown>> {
  const changes = new Map<string, Set<unknown>>();
  for (const event of events.filter((e) => e['detail-type'] === 'Import Status Changed')) {
    const key = `${String(event.detail.previous_status)} -> ${(event.detail.import as { status: string }).status}`;
    const ids = changes.get(key) ?? new Set();
    ids.add(event.detail.event_id);
    changes.set(key, ids);
  }
  return changes;
}

beforeAll(async () => {
  stack = await startTestStack({ importStateMachine: dyingAfterWork(await importStateMachine()) });
  const root = await mkdtemp(join(tmpdir(), 'retried-origins-'));
  await makeFixtureRepository(join(root, 'small.git'), { commits: 4, branches: 1, annotatedTags: 0 });
  origin = await serveGitHttp(root);
  receiver = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({
        guid: String(request.headers['x-github-delivery']),
        event: String(request.headers['x-github-event']),
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo', 'admin:repo_hook'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function hookedRepository(name: string): Promise<void> {
  const created = await api('POST', '/user/repos', { name });
  expect(created.status).toBe(201);
  const hook = await api('POST', `/repos/octocat/${name}/hooks`, {
    config: { url: `${receiverUrl}/${name}`, content_type: 'json' },
    events: ['repository_import'],
  });
  expect(hook.status).toBe(201);
}

describe('a step re-run after its worker died having announced', () => {
  it('announces each status change of an import that completes under one identity, and its repository_import under one GUID', async () => {
    await hookedRepository('retried');
    // No vcs: Detect runs, and moves the import from detecting to importing.
    expect(
      (await api('PUT', '/repos/octocat/retried/import', { vcs_url: `${origin.url}/small.git` })).status,
    ).toBe(201);
    await until(
      () => api('GET', '/repos/octocat/retried/import'),
      (answer) => answer.body.status === 'complete',
    );
    await until(
      async () => deliveries.filter((d) => d.event === 'repository_import' && d.body.status === 'success'),
      (found) => found.length > 0,
    );
    // What a re-run could still send arrives within this.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect([...died].filter((key) => key.endsWith(':retried')).sort()).toEqual([
      'Complete:retried',
      'Detect:retried',
      'RewriteHistory:retried',
    ]);

    const events = await eventsOf('retried');
    const changes = identitiesByChange(events);
    expect([...changes.keys()]).toEqual([
      'null -> detecting',
      'detecting -> importing',
      'importing -> mapping',
      'mapping -> pushing',
      'pushing -> complete',
    ]);
    for (const [change, ids] of changes) {
      expect({ change, ids: [...ids].length }).toEqual({ change, ids: 1 });
      expect([...ids][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    const completed = new Set(
      events.filter((e) => e['detail-type'] === 'Import Completed').map((e) => e.detail.event_id),
    );
    expect(completed.size).toBe(1);
    const ids = new Set(events.map((e) => e.detail.event_id));
    expect(ids.size).toBe(changes.size + completed.size);

    const outcomes = deliveries.filter(
      (d) => d.event === 'repository_import' && (d.body.repository as { name: string }).name === 'retried',
    );
    expect(new Set(outcomes.map((d) => d.guid)).size).toBe(1);
    expect(outcomes.every((d) => d.body.status === 'success')).toBe(true);
  }, 150_000);

  it('announces a failed import under one identity, and its repository_import failure under one GUID', async () => {
    await hookedRepository('retried-failing');
    const started = await api('PUT', '/repos/octocat/retried-failing/import', {
      vcs_url: `${origin.url}/missing.git`,
      vcs: 'git',
    });
    expect(started.status).toBe(201);
    await until(
      () => api('GET', '/repos/octocat/retried-failing/import'),
      (answer) => answer.body.status === 'error',
    );
    await until(
      async () => deliveries.filter((d) => d.event === 'repository_import' && d.body.status === 'failure'),
      (found) => found.length > 0,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(died.has('RecordFailure:retried-failing')).toBe(true);

    const events = await eventsOf('retried-failing');
    const changes = identitiesByChange(events);
    expect([...changes.keys()]).toEqual(['null -> importing', 'importing -> error']);
    for (const ids of changes.values()) {
      expect(ids.size).toBe(1);
      expect([...ids][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(
      new Set(events.filter((e) => e['detail-type'] === 'Import Failed').map((e) => e.detail.event_id)).size,
    ).toBe(1);
    const outcomes = deliveries.filter(
      (d) =>
        d.event === 'repository_import' && (d.body.repository as { name: string }).name === 'retried-failing',
    );
    expect(new Set(outcomes.map((d) => d.guid)).size).toBe(1);
  }, 150_000);
});
