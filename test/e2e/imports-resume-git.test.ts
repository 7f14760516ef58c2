import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { type FlakyOrigin, flakyOrigin } from '#test/flaky-origin';
import { gitClient, remoteRefs } from '#test/git-client';
import { type ImportRuns, importRuns } from '#test/import-runs';
import { startTestStack } from '#test/stack';

/**
 * Issue 36 item 3: restarting a Git import that failed in the middle of its raw history continues
 * from the chunks the failed attempt committed. With a 1 ms chunk budget each `ImportRawHistory`
 * is one depth step (1,000 commits, then deepened by 2,000, then 4,000: three chunks for this
 * fixture); the origin goes away at the third chunk's fetch, the import fails, the origin comes back
 * and the owner restarts. The restarted attempt fetches only the chunk that was left (counted in its
 * execution and at the origin), and ends identical to a fresh import of the same origin.
 */
process.env[ENV.importChunkSeconds] = '0.001';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let origin: OriginServer;
let flaky: FlakyOrigin;
let runs: ImportRuns;
const FETCH = /^GET \/long\.git\/info\/refs\?service=git-upload-pack/;

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'resume-origin-'));
  await makeFixtureRepository(join(root, 'long.git'), { commits: 12000, branches: 2, annotatedTags: 1 });
  origin = await serveGitHttp(root);
  // The origin goes away at the third chunk's fetch (the first chunk also asks for the origin's HEAD).
  let armed = true;
  flaky = await flakyOrigin(origin.url, (forwarded, line) => {
    if (!armed || !FETCH.test(line)) return false;
    const fetches = forwarded.filter((seen) => FETCH.test(seen)).length;
    if (fetches < 3) return false;
    armed = false;
    return true;
  });
  const user = await createUser(stack.endpointsFile, 'octocat');
  const token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  runs = importRuns(stack.baseUrl, token, stack.stepFunctionsEndpoint);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await flaky?.close();
  await origin?.close();
});

async function startImport(repo: string, url: string) {
  await runs.api('POST', '/user/repos', { name: repo });
  const started = await runs.api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: url, vcs: 'git' });
  expect(started.status).toBe(201);
}

describe('restarting a Git import that failed mid-history', () => {
  it('fetches only the chunks that were left and ends identical to a fresh import', async () => {
    await startImport('resumed', `${flaky.url}/long.git`);
    const failed = await runs.until('octocat/resumed', (body) => body.status === 'error');
    expect(failed.failed_step).toBe('raw');
    const first = await runs.rounds('octocat.resumed.attempt-1', 'ImportRawHistory');
    expect(first.succeeded).toBe(2);

    flaky.away = false;
    const before = flaky.forwarded.length;
    const restarted = await runs.api('PATCH', '/repos/octocat/resumed/import');
    expect(restarted.status).toBe(200);
    await runs.until('octocat/resumed', (body) => body.status === 'complete');
    const resumedFetches = flaky.forwarded.slice(before).filter((line) => FETCH.test(line)).length;
    const second = await runs.rounds('octocat.resumed.attempt-2', 'ImportRawHistory');

    const fetchesBefore = origin.requests.length;
    await startImport('fresh', `${origin.url}/long.git`);
    await runs.until('octocat/fresh', (body) => body.status === 'complete');
    const freshFetches = origin.requests.slice(fetchesBefore).filter((line) => FETCH.test(line)).length;
    const fresh = await runs.rounds('octocat.fresh.attempt-1', 'ImportRawHistory');

    expect(fresh.succeeded).toBe(3);
    // The restart costs the chunks that were left, at the origin too.
    expect(second.succeeded).toBe(fresh.succeeded - first.succeeded);
    expect(resumedFetches).toBeLessThan(freshFetches);
    const [resumed, whole] = [
      await runs.outcome('octocat/resumed', stack.webUrl),
      await runs.outcome('octocat/fresh', stack.webUrl),
    ];
    expect(resumed).toEqual(whole);
    expect(resumed.refs).toEqual(await remoteRefs(await gitClient(), `${origin.url}/long.git`));
  }, 300_000);
});
