import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStateMachine } from '#local/import-workflow';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { makeDumpProjectsRoot } from '#local/svn-projects-root';
import { type DyingStep, dyingStep } from '#test/dying-steps';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * A batch whose first import's worker dies on every try (the raw step's runtime killed, as Lambda
 * reports it): that import ends in `error`, its slot is given back, and the queue goes on: the
 * other imports start one at a time and complete.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let work: string;
let svn: SvnServer;
let dying: DyingStep;

const PROJECTS = ['retag', 'forks', 'replace'] as const;
const RUNNING = new Set(['detecting', 'importing', 'mapping', 'pushing']);
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'import-batches-dying-'));
  await makeDumpProjectsRoot(work, PROJECTS);
  svn = await serveSvn(work);
  dying = dyingStep(await importStateMachine(), 'ImportRawHistory');
  stack = await startTestStack({ importStateMachine: dying.machine });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await svn?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a batch whose worker dies', () => {
  it('moves on past the import whose worker died and completes the others, one at a time', async () => {
    dying.arm('retag', 1);
    const created = await api('POST', '/user/import-batches', {
      vcs_url: svn.url('root'),
      vcs: 'subversion',
      projects: [...PROJECTS],
      concurrency: 1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deadline = Date.now() + 90_000;
    let entries: { repository: string; status: string | null }[] = [];
    let batch: { running: number; queued: number } = { running: 1, queued: 2 };
    while (Date.now() < deadline) {
      const answer = await api('GET', `/user/import-batches/${created.body.id}`);
      entries = answer.body.imports;
      batch = { running: answer.body.running, queued: answer.body.queued };
      expect(entries.filter((entry) => RUNNING.has(entry.status ?? '')).length).toBeLessThanOrEqual(1);
      if (
        batch.running === 0 &&
        batch.queued === 0 &&
        entries.every((e) => e.status === 'complete' || e.status === 'error')
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    dying.disarm();
    expect(dying.deaths).toBeGreaterThan(0);
    expect(entries.map((entry) => [entry.repository, entry.status])).toEqual([
      ['retag', 'error'],
      ['forks', 'complete'],
      ['replace', 'complete'],
    ]);
    expect(batch).toMatchObject({ running: 0, queued: 0 });
  }, 120_000);
});
