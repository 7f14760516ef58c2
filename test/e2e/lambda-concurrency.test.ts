import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStateMachine } from '#local/import-workflow';
import { type ConcurrencyLimit, concurrencyLimit } from '#local/lambda-concurrency';
import { createUser, personalToken } from '#test/fixtures';
import { ORIGIN_KINDS, serveFourOrigins } from '#test/four-origins';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Lambda's concurrency limit: the workflow's functions share a limit of 2 concurrent invocations
 * (`lib/local/lambda-concurrency.ts`), and six imports start at once. Invocations beyond the limit
 * are refused as Lambda refuses them (`Lambda.TooManyRequestsException` to Step Functions); the
 * workflow's Retry waits them out and every import completes as it does alone.
 */

const LIMIT = 2;
const IMPORTS = 6;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let limit: ConcurrencyLimit;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origins: Awaited<ReturnType<typeof serveFourOrigins>>;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function until(repo: string, wanted: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted || last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(last.status, `${repo}: ${JSON.stringify(last)}`).toBe(wanted);
  return last;
}

async function startImport(repo: string, body: Record<string, string>): Promise<void> {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${repo}/import`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
}

beforeAll(async () => {
  limit = concurrencyLimit(LIMIT);
  stack = await startTestStack({ importStateMachine: await importStateMachine({}, { concurrency: limit }) });
  git = await gitClient();
  origins = await serveFourOrigins();
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await origins?.close();
});

describe("Lambda's concurrency limit", () => {
  it(`completes ${IMPORTS} imports started at once with ${LIMIT} concurrent invocations allowed`, async () => {
    // One import of each kind alone first: what each of the crowded ones must equal.
    const alone: Record<string, string[]> = {};
    for (const kind of ORIGIN_KINDS) {
      await startImport(`${kind}-alone`, origins.importBody(kind));
      await until(`${kind}-alone`, 'complete', 240_000);
      alone[kind] = await remoteRefs(git, `${stack.webUrl}/octocat/${kind}-alone.git`);
    }
    const refusedAlone = limit.refused;

    const crowd = Array.from({ length: IMPORTS }, (_, index) => ({
      repo: `crowd-${index}`,
      kind: ORIGIN_KINDS[index % ORIGIN_KINDS.length] ?? 'git',
    }));
    await Promise.all(crowd.map(({ repo, kind }) => startImport(repo, origins.importBody(kind))));
    for (const { repo, kind } of crowd) {
      await until(repo, 'complete', 600_000);
      expect(await remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`), repo).toEqual(alone[kind]);
    }
    // The limit held, and it was met: some invocations were refused and retried.
    expect(limit.peak).toBeLessThanOrEqual(LIMIT);
    expect(limit.refused).toBeGreaterThan(refusedAlone);
  }, 1_200_000);
});
