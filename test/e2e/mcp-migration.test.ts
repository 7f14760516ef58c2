import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, mcpToken, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { callOk, mcpClient } from '#test/mcp-client';
import { startTestStack } from '#test/stack';

/*
 * A whole migration by an MCP client (issue 38): the SDK's own client with a personal token calls
 * every tool on real imports from a Git origin that asks for credentials, polling the status
 * tools until each import is complete, and reads what the REST API says about the same imports.
 */

const exec = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let client: Client;
let token: string;
let root: string;
let http: OriginServer;
let originUrl: string;
const ORIGIN_AUTH = { username: 'mona', password: 'origin-secret-1' };
const owner = 'octocat';

const rest = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

/** Polls a status tool until `done` says so (the tools return at once; the import runs on). */
async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 90_000;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`${what} did not settle: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await read();
  }
  return last;
}

const SETTLED = ['complete', 'error', 'auth_failed', 'detection_needs_auth', 'detection_found_multiple'];
const importSettled = (repo: string) =>
  pollUntil(
    () => callOk(client, 'get_import_status', { owner, repo }),
    (json) => SETTLED.includes(json.status),
    `the import of ${repo}`,
  );

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcp-migration-'));
  await makeFixtureRepository(join(root, 'project.git'), { commits: 4, branches: 1, annotatedTags: 1 });
  http = await serveGitHttp(root, { auth: ORIGIN_AUTH });
  originUrl = `${http.url}/project.git`;
  stack = await startTestStack();
  const user = await createUser(stack.endpointsFile, owner);
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  ({ client } = await mcpClient(`${stack.webUrl}/mcp`, await mcpToken(stack, user, ['repo'])));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
  await http?.close();
  await rm(root, { recursive: true, force: true });
});

describe('a migration through the MCP tools', () => {
  it('imports an origin that needs credentials, maps authors, follows, syncs and cuts over', async () => {
    const created = await callOk(client, 'create_repository', { name: 'moved', private: true });
    expect(created.full_name).toBe('octocat/moved');

    const started = await callOk(client, 'start_import', { owner, repo: 'moved', vcs_url: originUrl });
    expect(started.vcs_url).toBe(originUrl);
    expect(['detecting', 'importing', 'detection_needs_auth', 'auth_failed']).toContain(started.status);
    const asking = await importSettled('moved');
    expect(['detection_needs_auth', 'auth_failed']).toContain(asking.status);

    await callOk(client, 'update_import', {
      owner,
      repo: 'moved',
      vcs_username: ORIGIN_AUTH.username,
      vcs_password: ORIGIN_AUTH.password,
    });
    const done = await importSettled('moved');
    expect(done.status, JSON.stringify(done)).toBe('complete');
    // The tool's structured content is the REST route's body.
    expect(done).toEqual((await rest('GET', '/repos/octocat/moved/import')).body);

    const report = await callOk(client, 'get_import_report', { owner, repo: 'moved' });
    expect(report).toEqual((await rest('GET', '/repos/octocat/moved/import/report')).body);

    const listed = await callOk(client, 'list_import_authors', { owner, repo: 'moved' });
    expect(listed.authors.map((author: { remote_name: string }) => author.remote_name).sort()).toEqual([
      'Ada Lovelace',
      'Grace Hopper',
    ]);
    expect(listed.authors).toEqual((await rest('GET', '/repos/octocat/moved/import/authors')).body);
    const ada = listed.authors.find(
      (author: { remote_name: string }) => author.remote_name === 'Ada Lovelace',
    );
    const mapped = await callOk(client, 'map_import_author', {
      owner,
      repo: 'moved',
      author_id: ada.id,
      name: 'Ada King',
      email: 'ada@moved.example',
    });
    expect([mapped.name, mapped.email]).toEqual(['Ada King', 'ada@moved.example']);
    // The mapping rewrites the history; the file after it would start a second rewrite as the
    // first ends (the service's rule), so the test lets the first finish.
    expect((await importSettled('moved')).status).toBe('complete');

    const file = await callOk(client, 'apply_authors_file', {
      owner,
      repo: 'moved',
      content: 'grace@example.com = Grace B. Hopper <grace@moved.example>\n',
    });
    expect(file.format).toBe('authors_txt');
    expect(file.mapped.map((author: { email: string }) => author.email)).toEqual(['grace@moved.example']);
    const remapped = await importSettled('moved');
    expect(remapped.status).toBe('complete');

    expect(
      (await callOk(client, 'set_import_lfs', { owner, repo: 'moved', use_lfs: 'opt_out' })).use_lfs,
    ).toBe('opt_out');

    const tip = (
      await exec('git', ['--git-dir', join(root, 'project.git'), 'rev-parse', 'main'])
    ).stdout.trim();
    const revision = await callOk(client, 'lookup_revision', { owner, repo: 'moved', origin_revision: tip });
    expect(revision).toEqual((await rest('GET', `/repos/octocat/moved/import/revisions/${tip}`)).body);
    expect(revision.commit).toMatch(/^[0-9a-f]{40}$/);

    const following = await callOk(client, 'follow_origin', { owner, repo: 'moved', interval_minutes: null });
    expect(following.state).toBe('following');
    const syncing = await callOk(client, 'sync_now', { owner, repo: 'moved' });
    expect(syncing.import_url ?? syncing.url).toBeTruthy();
    expect((await importSettled('moved')).status).toBe('complete');
    const sync = await pollUntil(
      () => callOk(client, 'get_import_sync', { owner, repo: 'moved' }),
      (json) => json.last_sync !== null,
      'the sync',
    );
    expect(sync.last_sync.status).toBe('succeeded');
    expect((await callOk(client, 'cut_over', { owner, repo: 'moved' })).state).toBe('cut_over');

    const repositories = await callOk(client, 'list_repositories', {});
    const entry = repositories.repositories.find((one: { name: string }) => one.name === 'moved');
    expect([entry.private, entry.import.status, entry.following]).toEqual([true, 'complete', 'cut_over']);
  }, 240_000);

  it("answers the service's errors as the REST API words them, as error results", async () => {
    // A sync after the cut-over: the service's own refusal.
    const again = await client.callTool({ name: 'sync_now', arguments: { owner, repo: 'moved' } });
    const restAgain = await rest('POST', '/repos/octocat/moved/import/sync');
    expect(restAgain.status).toBe(422);
    expect(again.isError).toBe(true);
    expect(again.structuredContent).toEqual({ status: restAgain.status, ...restAgain.body });
    expect((again.content as { text: string }[])[0]?.text).toContain(restAgain.body.message);

    // A body the route's own schema refuses: the same 422 and `errors`.
    const bad = { name: 'No <angle> brackets', email: 'not-an-email' };
    const invalid = await client.callTool({
      name: 'map_import_author',
      arguments: { owner, repo: 'moved', author_id: 1, ...bad },
    });
    const restInvalid = await rest('PATCH', '/repos/octocat/moved/import/authors/1', bad);
    expect(restInvalid.status).toBe(422);
    expect(invalid.structuredContent).toEqual({ status: 422, ...restInvalid.body });

    // A path parameter the route table refuses is the REST 404, without a read.
    const unnamed = await client.callTool({
      name: 'get_import_status',
      arguments: { owner: '-bad-', repo: 'x' },
    });
    expect(unnamed.structuredContent).toMatchObject({ status: 404, message: 'Not Found' });
  });

  it('imports a batch of origins, follows, syncs and cuts it over, and applies an authors file to it', async () => {
    const batch = await callOk(client, 'start_import_batch', {
      imports: [
        { vcs_url: originUrl, repository: 'batch-one' },
        { vcs_url: originUrl, repository: 'batch-two' },
      ],
      vcs_username: ORIGIN_AUTH.username,
      vcs_password: ORIGIN_AUTH.password,
    });
    expect(batch.imports.map((entry: { repository: string }) => entry.repository)).toEqual([
      'batch-one',
      'batch-two',
    ]);
    const complete = await pollUntil(
      () => callOk(client, 'get_import_batch', { batch_id: batch.id }),
      // Settled, and the batch has given back their slots (which follows each import's `complete`).
      (json) =>
        json.running === 0 &&
        json.imports.every((entry: { status?: string }) => SETTLED.includes(entry.status ?? '')),
      'the batch',
    );
    expect(complete.imports.map((entry: { status: string }) => entry.status)).toEqual([
      'complete',
      'complete',
    ]);
    expect(complete).toEqual((await rest('GET', `/user/import-batches/${batch.id}`)).body);

    const batches = await callOk(client, 'list_import_batches', {});
    expect(batches.batches.map((one: { id: number }) => one.id)).toEqual([batch.id]);

    const authors = await callOk(client, 'apply_batch_authors_file', {
      batch_id: batch.id,
      format: 'csv',
      content: 'ada@example.com,Ada King,ada@moved.example\n',
    });
    expect(authors.outcomes.map((one: { outcome: string }) => one.outcome)).toEqual(['applied', 'applied']);
    for (const repo of ['batch-one', 'batch-two'])
      expect((await importSettled(repo)).status).toBe('complete');

    const followed = await callOk(client, 'follow_import_batch', {
      batch_id: batch.id,
      interval_minutes: null,
    });
    expect(followed.outcomes.map((one: { outcome: string }) => one.outcome)).toEqual(['done', 'done']);
    const synced = await callOk(client, 'sync_import_batch', { batch_id: batch.id });
    expect(synced.outcomes.map((one: { outcome: string }) => one.outcome)).toEqual(['done', 'done']);
    for (const repo of ['batch-one', 'batch-two']) {
      expect((await importSettled(repo)).status).toBe('complete');
      // The sync's attempt has ended once it is recorded (a cut-over is refused while one runs).
      await pollUntil(
        () => callOk(client, 'get_import_sync', { owner, repo }),
        (json) => json.last_sync !== null,
        `the sync of ${repo}`,
      );
    }
    const cut = await callOk(client, 'cut_over_import_batch', { batch_id: batch.id });
    expect(cut.outcomes.map((one: { outcome: string }) => one.outcome)).toEqual(['done', 'done']);
  }, 240_000);
});
