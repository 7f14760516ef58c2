import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { startTestStack } from '#test/stack';

/**
 * The chunked raw step through the state machine: with a 1 ms chunk budget every invocation of
 * `ImportRawHistory` does one bounded step (a depth fetch) and returns, and the workflow loops until
 * the history is complete; the result has the origin's very commit and tag ids. (Depth is counted
 * from every tip, so the fixture has no tag deep in its history: one would fetch it all at once.)
 */
process.env[ENV.importChunkSeconds] = '0.001';

let stack: Awaited<ReturnType<typeof startTestStack>>;
let origin: OriginServer;
let token: string;

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'chunked-origin-'));
  await makeFixtureRepository(join(root, 'long.git'), { commits: 3000, branches: 2, annotatedTags: 1 });
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await origin?.close();
});

describe('a chunked import', () => {
  it('loops ImportRawHistory in bounded chunks and ends with identical ids', async () => {
    const headers = { Authorization: `token ${token}`, Accept: 'application/vnd.github.barred-rock-preview' };
    await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'long' }),
    });
    const started = await fetch(`${stack.baseUrl}/repos/octocat/long/import`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ vcs_url: `${origin.url}/long.git`, vcs: 'git' }),
    });
    expect(started.status).toBe(201);
    const percents: number[] = [];
    let last: Record<string, unknown> = {};
    const deadline = Date.now() + 90_000;
    while (last.status !== 'complete' && Date.now() < deadline) {
      last = (await (
        await fetch(`${stack.baseUrl}/repos/octocat/long/import`, { headers })
      ).json()) as Record<string, unknown>;
      if (typeof last.import_percent === 'number') percents.push(last.import_percent);
      if (last.status === 'error') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(last.status, JSON.stringify(last)).toBe('complete');
    expect(percents).toEqual([...percents].sort((a, b) => a - b));

    const sfn = new SFNClient({
      endpoint: stack.stepFunctionsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const history = await sfn.send(
      new GetExecutionHistoryCommand({
        executionArn: 'arn:aws:states:us-east-1:123456789012:execution:SourceImport:octocat.long.attempt-1',
        maxResults: 1000,
      }),
    );
    const chunks = (history.events ?? []).filter(
      (event) => event.stateEnteredEventDetails?.name === 'ImportRawHistory',
    );
    expect(chunks.length).toBeGreaterThanOrEqual(2);

    const git = await gitClient();
    expect(await remoteRefs(git, `${stack.webUrl}/octocat/long.git`)).toEqual(
      await remoteRefs(git, `${origin.url}/long.git`),
    );
  });
});
