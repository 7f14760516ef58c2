import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '#data/client';
import { takeTurn } from '#data/import-batches';
import { batchEntryKey } from '#data/keys';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { makeDumpProjectsRoot } from '#local/svn-projects-root';
import { tendBatchQueues } from '#services/import-batch-queue';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { type RefusingStepFunctions, refusingStepFunctions } from '#test/refusing-step-functions';
import { startTestStack } from '#test/stack';

/**
 * A function that starts a batch's imports dies between taking an entry's turn (its slot held, the
 * entry `started`) and making the entry's import: the batch's create request right after its
 * transaction, or a settle point after `takeTurn`. The scheduler's safety net finds a held slot
 * without an import and without a cancel, and gives the entry its turn again, so the import still
 * happens. (Before: the slot was released and the entry stayed `started` with no import, for ever.)
 * The death is reproduced as the state it leaves: the turn taken here, its time a minute back.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let work: string;
let svn: SvnServer;
let stepFunctions: RefusingStepFunctions;

const OWNER = 'octocat';
const PROJECTS = ['retag', 'forks'] as const;
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'import-batches-dead-starter-'));
  await makeDumpProjectsRoot(work, PROJECTS);
  svn = await serveSvn(work);
  stack = await startTestStack();
  stepFunctions = await refusingStepFunctions(stack.stepFunctionsEndpoint);
  process.env[ENV.stepFunctionsEndpoint] = stepFunctions.endpoint;
  const user = await createUser(stack.endpointsFile, OWNER);
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stepFunctions?.stop();
  await stack?.stop();
  await svn?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a batch whose starter died after taking a turn', () => {
  it('is given its turn again by the scheduler, and every import completes', async () => {
    // Step Functions refuses every start: the entries are made and wait in the queue.
    stepFunctions.refuse = /.*/;
    const created = await api('POST', '/user/import-batches', {
      vcs_url: svn.url('root'),
      vcs: 'subversion',
      projects: [...PROJECTS],
      concurrency: 1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const batchId = created.body.id as number;
    expect((await api('GET', `/user/import-batches/${batchId}`)).body).toMatchObject({
      running: 0,
      queued: 2,
    });
    stepFunctions.refuse = undefined;

    // What the dead starter left: the first entry's turn taken, no import made, a minute ago.
    expect(await takeTurn(OWNER, batchId, 0, 1)).not.toBe('full');
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: batchEntryKey(OWNER, batchId, 0),
        UpdateExpression: 'SET startedAt = :then',
        ExpressionAttributeValues: { ':then': new Date(Date.now() - 90_000).toISOString() },
      }),
    );
    const held = (await api('GET', `/user/import-batches/${batchId}`)).body;
    expect(held).toMatchObject({ running: 1, queued: 1 });
    expect(held.imports[0].status).toBeNull();

    // The scheduler's once-a-minute look.
    await tendBatchQueues();

    const deadline = Date.now() + 90_000;
    let answer = held;
    while (Date.now() < deadline) {
      answer = (await api('GET', `/user/import-batches/${batchId}`)).body;
      // A slot is given back just after its import's `complete` is written (the Complete step's last act).
      const settled = answer.running === 0 && answer.queued === 0;
      if (settled && answer.imports.every((entry: { status: string | null }) => entry.status === 'complete'))
        break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(
      answer.imports.map((entry: { repository: string; status: string | null }) => [
        entry.repository,
        entry.status,
      ]),
    ).toEqual([
      ['retag', 'complete'],
      ['forks', 'complete'],
    ]);
    expect(answer).toMatchObject({ running: 0, queued: 0 });
  }, 150_000);
});
