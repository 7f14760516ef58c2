import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedEvent, recordedEvents } from '#local/event-bus';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { IMPORT_EVENT_SOURCE } from '#shared/import-events';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Import events on the local default event bus (the PutEvents stand-in records what the service
 * puts): imports driven over HTTP through the real workflow, events read from the stand-in's file.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let origin: OriginServer;
let protectedOrigin: OriginServer;
const SECRET = { username: 'origin-user-7f3a', password: 'origin-pass-91c4e2d8' };

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function newRepo(name: string): Promise<string> {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

/** The repository's events, once `done` holds for them (they are put after each status write). */
async function eventsOf(
  repo: string,
  done: (events: RecordedEvent[]) => boolean,
  timeoutMs = 60_000,
): Promise<RecordedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  let events: RecordedEvent[] = [];
  while (Date.now() < deadline) {
    events = (await recordedEvents(stack.eventsFile)).filter((event) => event.detail.repo === repo);
    if (done(events)) return events;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`events of ${repo}: ${JSON.stringify(events.map((e) => e['detail-type']))}`);
}

const has = (type: string) => (events: RecordedEvent[]) => events.some((e) => e['detail-type'] === type);
const changes = (events: RecordedEvent[]) =>
  events
    .filter((e) => e['detail-type'] === 'Import Status Changed')
    .map((e) => [e.detail.previous_status, (e.detail.import as { status: string }).status]);

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'event-origins-'));
  await makeFixtureRepository(join(root, 'small.git'), { commits: 5, branches: 1, annotatedTags: 1 });
  origin = await serveGitHttp(root);
  protectedOrigin = await serveGitHttp(root, { auth: SECRET });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
  await protectedOrigin?.close();
});

describe('import events on the default event bus', () => {
  it('publishes every status change in order, then Import Completed with the import as the API shows it and no credentials', async () => {
    const repo = await newRepo('evented');
    const started = await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${protectedOrigin.url}/small.git`,
      vcs: 'git',
      vcs_username: SECRET.username,
      vcs_password: SECRET.password,
    });
    expect(started.status).toBe(201);
    const events = await eventsOf(repo, has('Import Completed'));
    expect(events.every((e) => e.source === IMPORT_EVENT_SOURCE)).toBe(true);
    expect(changes(events)).toEqual([
      [null, 'importing'],
      ['importing', 'mapping'],
      ['mapping', 'pushing'],
      ['pushing', 'complete'],
    ]);
    const completed = events.find((e) => e['detail-type'] === 'Import Completed');
    const shown = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    expect(completed?.detail).toEqual({
      event_id: expect.stringMatching(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      ),
      owner: 'octocat',
      repo,
      attempt: 1,
      execution_name: `octocat.${repo}.attempt-1`,
      sync: false,
      previous_status: 'pushing',
      import: shown,
    });
    const recorded = await readFile(stack.eventsFile, 'utf8');
    expect(recorded).not.toContain(SECRET.username);
    expect(recorded).not.toContain(SECRET.password);
  });

  it('publishes Import Failed with the failed step when the origin has no such repository', async () => {
    const repo = await newRepo('evented-missing');
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${origin.url}/missing.git`, vcs: 'git' });
    const events = await eventsOf(repo, has('Import Failed'));
    expect(changes(events)).toEqual([
      [null, 'importing'],
      ['importing', 'error'],
    ]);
    const failed = events.find((e) => e['detail-type'] === 'Import Failed');
    expect(failed?.detail.import).toMatchObject({ status: 'error', failed_step: 'raw' });
    expect(events.some((e) => e['detail-type'] === 'Import Completed')).toBe(false);
  });

  it('publishes Import Cancelled with the import as it last was', async () => {
    const repo = await newRepo('evented-cancelled');
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${protectedOrigin.url}/small.git` });
    await eventsOf(repo, (events) => changes(events).some(([, status]) => status === 'detection_needs_auth'));
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
    const events = await eventsOf(repo, has('Import Cancelled'));
    expect(changes(events)).toEqual([
      [null, 'detecting'],
      ['detecting', 'detection_needs_auth'],
    ]);
    const cancelled = events.at(-1);
    expect(cancelled?.['detail-type']).toBe('Import Cancelled');
    expect(cancelled?.detail).toMatchObject({
      owner: 'octocat',
      repo,
      attempt: 1,
      import: { status: 'detection_needs_auth', url: `${stack.baseUrl}/repos/octocat/${repo}/import` },
    });
  });

  it('publishes a sync’s status changes and Sync Completed, named by the sync’s execution', async () => {
    const repo = await newRepo('evented-sync');
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${origin.url}/small.git`, vcs: 'git' });
    await eventsOf(repo, has('Import Completed'));
    expect((await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status).toBe(
      200,
    );
    expect((await api('POST', `/repos/octocat/${repo}/import/sync`)).status).toBe(202);
    const events = (await eventsOf(repo, has('Sync Completed'))).filter((e) => e.detail.sync === true);
    expect(changes(events)).toEqual([
      ['complete', 'importing'],
      ['importing', 'mapping'],
      ['mapping', 'pushing'],
      ['pushing', 'complete'],
    ]);
    expect(events.at(-1)?.detail).toMatchObject({
      attempt: 2,
      execution_name: `octocat.${repo}.sync-2`,
      import: { status: 'complete' },
    });
  });
});
