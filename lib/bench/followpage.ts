import { db } from '#data/client';
import { nextId } from '#data/counters';
import { enterStatus } from '#data/imports/progress';
import { createImport } from '#data/imports/requests';
import { followOrigin, recordSyncOutcome } from '#data/imports/sync';
import { DEFAULT_IMPORT_CHOICES } from '#domain/imports';
import { WebClient } from '#local/web-client';
import { median, ms } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, countDynamoDbCalls, startBenchStack } from './support.ts';

/*
 * What the progress page's following section (issue 27) costs a page view: the page of an import
 * that does not follow its origin against one that follows it with a recorded sync outcome,
 * in alternating rounds on the same stack, and the DynamoDB calls of each view.
 */

export interface FollowPageResult {
  readonly rounds: number;
  readonly offMs: number;
  readonly followingMs: number;
  readonly offCalls: number;
  readonly followingCalls: number;
  readonly offBytes: number;
  readonly followingBytes: number;
}

async function completeImport(baseUrl: string, repo: string): Promise<number> {
  const created = await fetch(`${baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: basicAuth('bench', BENCH_PASSWORD), 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: repo }),
  });
  if (created.status !== 201) throw new Error(`repository ${repo}: ${created.status}`);
  const importId = await nextId('import');
  const made = await createImport({
    ownerLogin: 'bench',
    repoName: repo,
    importId,
    vcs: 'git',
    vcsUrl: `https://origin.example/${repo}.git`,
    status: 'importing',
    choices: DEFAULT_IMPORT_CHOICES,
  });
  if (made.kind !== 'created') throw new Error(`import not created: ${made.kind}`);
  await enterStatus('bench', repo, made.record.attempt, 'complete');
  return importId;
}

export async function measureFollowPage(rounds: number): Promise<FollowPageResult> {
  const { stack, endpointsFile, stop } = await startBenchStack('followpage');
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    await completeImport(stack.baseUrl, 'not-following');
    const followedId = await completeImport(stack.baseUrl, 'following');
    await followOrigin('bench', 'following', followedId, 60, 0, undefined);
    await recordSyncOutcome('bench', 'following', followedId, { errorMessage: 'The origin was not found' });
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    await browser.post('/login', { login: 'bench', password: BENCH_PASSWORD });
    const calls = countDynamoDbCalls(db(), (command) => command);
    const view = async (repo: string) => {
      calls.take();
      const started = performance.now();
      const response = await browser.get(`/bench/${repo}/import`);
      const elapsed = performance.now() - started;
      if (response.status !== 200) throw new Error(`${repo}: ${response.status}`);
      return { elapsed, calls: calls.take().length, bytes: Buffer.byteLength(browser.lastHtml) };
    };
    for (let i = 0; i < 5; i++) await Promise.all([view('not-following'), view('following')]);
    const off: number[] = [];
    const following: number[] = [];
    let last = { off: { calls: 0, bytes: 0 }, following: { calls: 0, bytes: 0 } };
    for (let round = 0; round < rounds; round++) {
      // Alternating, so a change in the machine's load falls on both.
      const first = round % 2 === 0 ? 'not-following' : 'following';
      const a = await view(first);
      const b = await view(first === 'following' ? 'not-following' : 'following');
      const [o, f] = first === 'following' ? [b, a] : [a, b];
      off.push(o.elapsed);
      following.push(f.elapsed);
      last = { off: o, following: f };
    }
    calls.remove();
    return {
      rounds,
      offMs: median(off),
      followingMs: median(following),
      offCalls: last.off.calls,
      followingCalls: last.following.calls,
      offBytes: last.off.bytes,
      followingBytes: last.following.bytes,
    };
  } finally {
    await stop();
  }
}

export function followPageReport(result: FollowPageResult, machine: string): string {
  return `Measured ${machine}: \`GET /{owner}/{repo}/import\` signed in, in ${result.rounds} alternating rounds on one local stack (in-process handlers, DynamoDB Local): an import that does not follow its origin, and one that follows it with a failed last sync recorded. DynamoDB calls counted per view (the sync resource is read beside the page's other reads, in parallel).

| Page | median | ratio | DynamoDB calls | HTML |
|---|---|---|---|---|
| not following | ${ms(result.offMs)} | 1.00 | ${result.offCalls} | ${result.offBytes} bytes |
| following | ${ms(result.followingMs)} | ${(result.followingMs / result.offMs).toFixed(2)} | ${result.followingCalls} | ${result.followingBytes} bytes |`;
}
