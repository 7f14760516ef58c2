import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { type ImportRuns, importRuns } from '#test/import-runs';
import { startTestStack } from '#test/stack';

/**
 * Issue 36 item 2, Step Functions' 25,000-event history: scaled down, the local endpoint ends an
 * execution at 40 events (`LOCAL_STEP_FUNCTIONS_MAX_HISTORY_EVENTS`; 25,000 as AWS otherwise,
 * test/integration/step-functions-history-limit.test.ts; one execution of this import writes about
 * 45), and an execution runs at most 2 rounds
 * of the raw and push loops (`IMPORT_ROUNDS_PER_EXECUTION`; 1,000 by default). A Git import of three
 * raw chunks (1 ms chunk budget) and its push then go on in `….attempt-1.part-2` (and more parts
 * as needed), each part but the last ending in `ContinuedInNewExecution`, and end with the origin's very refs and a revision
 * map of every commit. Without the continuation the first execution fails at its 40th event.
 */
process.env[ENV.importChunkSeconds] = '0.001';
// Set it high (`IMPORT_ROUNDS_PER_EXECUTION=100000`) to see the import fail without the continuation.
process.env[ENV.importRoundsPerExecution] ??= '2';
process.env.LOCAL_STEP_FUNCTIONS_MAX_HISTORY_EVENTS = '40';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let origin: OriginServer;
let runs: ImportRuns;
let sfn: SFNClient;
const PREFIX = 'arn:aws:states:us-east-1:123456789012:execution:SourceImport:';

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'continued-origin-'));
  await makeFixtureRepository(join(root, 'long.git'), { commits: 12000, branches: 2, annotatedTags: 1 });
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, 'octocat');
  const token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  runs = importRuns(stack.baseUrl, token, stack.stepFunctionsEndpoint);
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}, 180_000);

afterAll(async () => {
  sfn?.destroy();
  await stack?.stop();
  await origin?.close();
});

async function startImport(repo: string) {
  await runs.api('POST', '/user/repos', { name: repo });
  const started = await runs.api('PUT', `/repos/octocat/${repo}/import`, {
    vcs_url: `${origin.url}/long.git`,
    vcs: 'git',
  });
  expect(started.status).toBe(201);
}

const describeExecution = (name: string) =>
  sfn.send(new DescribeExecutionCommand({ executionArn: `${PREFIX}${name}` })).catch(() => undefined);

describe('a long import', () => {
  it('continues in new executions of the same attempt and ends with the origin’s ids', async () => {
    await startImport('long');
    const done = await runs.until('octocat/long', (body) => body.status === 'complete', 240_000);
    expect(done.status).toBe('complete');
    const parts: string[] = [];
    for (let part = 1; ; part++) {
      const name = part === 1 ? 'octocat.long.attempt-1' : `octocat.long.attempt-1.part-${part}`;
      let execution = await describeExecution(name);
      if (!execution) break;
      // The last part may still be writing its last events when the import reads complete.
      for (let wait = 0; execution?.status === 'RUNNING' && wait < 100; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        execution = await describeExecution(name);
      }
      parts.push(`${name} ${execution?.status}`);
      expect(execution?.status, name).toBe('SUCCEEDED');
      expect((await runs.history(name)).length).toBeLessThan(40);
    }
    expect(parts.length, parts.join('\n')).toBeGreaterThanOrEqual(2);
    expect(
      parts.every((line) => line.endsWith('SUCCEEDED')),
      parts.join('\n'),
    ).toBe(true);
    const first = await runs.history('octocat.long.attempt-1');
    expect(
      first.filter((event) => event.type === 'SucceedStateEntered').at(-1)?.stateEnteredEventDetails?.name,
    ).toBe('ContinuedInNewExecution');

    const git = await gitClient();
    expect(await remoteRefs(git, `${stack.webUrl}/octocat/long.git`)).toEqual(
      await remoteRefs(git, `${origin.url}/long.git`),
    );
    const revisions = await runs.all('/repos/octocat/long/import/revisions');
    expect(new Set(revisions.map((entry) => entry.commit)).size).toBe(revisions.length);
    expect(revisions.length).toBe(12000);
  }, 300_000);

  it('is cancelled in its second execution: that one is stopped and no part follows', async () => {
    await startImport('stopped');
    const second = 'octocat.stopped.attempt-1.part-2';
    const deadline = Date.now() + 120_000;
    while ((await describeExecution(second))?.status !== 'RUNNING' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await describeExecution(second))?.status).toBe('RUNNING');
    expect((await runs.api('DELETE', '/repos/octocat/stopped/import')).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await describeExecution(second))?.status).toBe('ABORTED');
    expect(await describeExecution('octocat.stopped.attempt-1.part-3')).toBeUndefined();
  }, 180_000);
});
