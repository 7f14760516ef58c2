import { mkdir, mkdtemp, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { importStateMachine } from '#local/import-workflow';
import { makeSvnRepository } from '#local/svn-fixtures';
import { serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { type DyingStep, dyingStep } from '#test/dying-steps';
import { flakyOrigin, flakyTcpOrigin } from '#test/flaky-origin';
import { type ImportRuns, octocatRuns } from '#test/import-runs';
import { startTestStack } from '#test/stack';

/**
 * Issue 36 item 3 for the other origin kinds: an import of a Subversion, a Mercurial and a TFVC
 * origin whose raw step keeps dying from one chunk on (each retry too) ends in `error`; the owner
 * restarts it (an empty PATCH) and it completes. The restarted attempt runs only the raw chunks
 * the failed one had not finished (counted in its execution's history) and asks the origin for
 * less than a fresh import does (requests or connections counted at a relay in front of it), and
 * the import ends identical to a fresh import of the same origin: refs and commit ids, revision
 * map, authors and report. With a 1 ms chunk budget each raw chunk is one bounded step (a
 * Subversion range or conversion, a Mercurial pull or conversion, one TFVC changeset).
 */
process.env[ENV.importChunkSeconds] = '0.001';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let runs: ImportRuns;
let dying: DyingStep;
const closers: (() => Promise<void>)[] = [];

/** Each origin kind: the import's body, and how much the origin has been asked so far. */
const origins: Record<string, { body: Record<string, string>; asked: () => number }> = {};

beforeAll(async () => {
  dying = dyingStep(await importStateMachine(), 'ImportRawHistory');
  stack = await startTestStack({ importStateMachine: dying.machine });
  const work = await mkdtemp(join(tmpdir(), 'resume-origins-'));
  await Promise.all([
    makeHgFixture(join(work, 'hg')),
    mkdir(join(work, 'svn'))
      .then(() => makeSvnRepository(join(work, 'make-svn')))
      .then((made) => rename(made.path, join(work, 'svn', 'std'))),
  ]);
  const [svn, hg, tfvc] = await Promise.all([
    serveSvn(join(work, 'svn')),
    serveHg({ repo: join(work, 'hg') }),
    serveTfvc({ projects: tfvcHistory(), maxPage: 3 }),
  ]);
  const svnRelay = await flakyTcpOrigin(svn.port);
  const hgRelay = await flakyOrigin(hg.url);
  const tfvcRelay = await flakyOrigin(tfvc.url);
  closers.push(svn.close, hg.close, tfvc.close, svnRelay.close, hgRelay.close, tfvcRelay.close);
  origins.subversion = {
    body: { vcs_url: `svn://127.0.0.1:${svnRelay.port}/std`, vcs: 'subversion' },
    asked: () => svnRelay.relayed,
  };
  origins.mercurial = {
    body: { vcs_url: `${hgRelay.url}/`, vcs: 'mercurial' },
    asked: () => hgRelay.forwarded.length,
  };
  origins.tfvc = {
    body: {
      vcs_url: tfvc.collectionUrl.replace(tfvc.url, tfvcRelay.url),
      vcs: 'tfvc',
      tfvc_project: 'Alpha',
    },
    asked: () => tfvcRelay.forwarded.length,
  };
  runs = await octocatRuns(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  for (const close of closers) await close().catch(() => undefined);
});

/** Runs `act` and answers how much the origin was asked meanwhile. */
async function askedDuring(kind: string, act: () => Promise<unknown>): Promise<number> {
  const origin = origins[kind];
  if (!origin) throw new Error(`no origin ${kind}`);
  const before = origin.asked();
  await act();
  return origin.asked() - before;
}

describe.each(['subversion', 'mercurial', 'tfvc'])('restarting a failed %s import', (kind) => {
  it('runs only the raw chunks that were left and ends identical to a fresh import', async () => {
    const body = origins[kind]?.body ?? {};
    const fresh = `${kind}-fresh`;
    const freshAsked = await askedDuring(kind, async () => {
      await runs.start(fresh, body);
      await runs.until(`octocat/${fresh}`, (record) => record.status === 'complete');
    });
    const whole = await runs.rounds(`octocat.${fresh}.attempt-1`, 'ImportRawHistory');
    expect(whole.succeeded, 'the fixture needs several raw chunks').toBeGreaterThanOrEqual(2);

    // The last raw chunk and each of its retries die: the import ends in error in its raw step.
    const resumed = `${kind}-resumed`;
    dying.arm(resumed, whole.succeeded);
    await runs.start(resumed, body);
    const failed = await runs.until(`octocat/${resumed}`, (record) => record.status === 'error', 180_000);
    dying.disarm();
    expect(failed.failed_step).toBe('raw');
    expect(dying.deaths).toBeGreaterThan(1);
    const first = await runs.rounds(`octocat.${resumed}.attempt-1`, 'ImportRawHistory');
    expect(first.succeeded).toBe(whole.succeeded - 1);

    const resumedAsked = await askedDuring(kind, async () => {
      const restarted = await runs.api('PATCH', `/repos/octocat/${resumed}/import`);
      expect(restarted.status).toBe(200);
      await runs.until(`octocat/${resumed}`, (record) => record.status === 'complete');
    });
    const second = await runs.rounds(`octocat.${resumed}.attempt-2`, 'ImportRawHistory');
    expect(second.succeeded).toBe(whole.succeeded - first.succeeded);
    expect(resumedAsked).toBeLessThan(freshAsked);
    expect(await runs.outcome(`octocat/${resumed}`, stack.webUrl)).toEqual(
      await runs.outcome(`octocat/${fresh}`, stack.webUrl),
    );
  }, 400_000);
});
