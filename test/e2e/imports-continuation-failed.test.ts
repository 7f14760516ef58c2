import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { type ImportRuns, octocatRuns } from '#test/import-runs';
import { type RefusingStepFunctions, refusingStepFunctions } from '#test/refusing-step-functions';
import { startTestStack } from '#test/stack';

/**
 * Issue 36 items 2 and 3, the continuation that cannot start: an execution that spent its rounds
 * (`IMPORT_ROUNDS_PER_EXECUTION=2`) starts the attempt's next part (`ContinueInNewExecution`), and
 * Step Functions refuses it (`ExecutionLimitExceeded`: the account's open executions at their
 * quota; a proxy in front of the local endpoint answers so for the parts of one import). The
 * import ends in `error` in the step that could not continue, with a message that says what
 * happened and that a restart continues; the restart then runs only the raw chunks that were left
 * and ends identical to a fresh import. The TFVC origin imports one changeset per raw chunk with a
 * 1 ms chunk budget (8 chunks: 2 per part).
 */
process.env[ENV.importChunkSeconds] = '0.001';
process.env[ENV.importRoundsPerExecution] = '2';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let stepFunctions: RefusingStepFunctions;
let tfvc: TfvcServer;
let runs: ImportRuns;
/** The import of the TFVC stand-in's project Alpha. */
const alpha = () => ({ vcs_url: tfvc.collectionUrl, vcs: 'tfvc', tfvc_project: 'Alpha' });

beforeAll(async () => {
  stack = await startTestStack();
  // The service reads its configuration on its first request: from then on through the proxy.
  stepFunctions = await refusingStepFunctions(stack.stepFunctionsEndpoint);
  process.env[ENV.stepFunctionsEndpoint] = stepFunctions.endpoint;
  tfvc = await serveTfvc({ projects: tfvcHistory(), maxPage: 3 });
  runs = await octocatRuns(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await stepFunctions?.stop();
  await tfvc?.close();
});

/** Raw chunks that succeeded in every part of an attempt (`….attempt-N`, `….attempt-N.part-P`). */
async function rawChunks(attempt: string): Promise<number> {
  let total = 0;
  for (let part = 1; ; part++) {
    const name = part === 1 ? attempt : `${attempt}.part-${part}`;
    const rounds = await runs.rounds(name, 'ImportRawHistory').catch((error: Error) => {
      if (error.name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    });
    if (!rounds) return total;
    total += rounds.succeeded;
  }
}

describe('an import whose next execution cannot start', () => {
  it('ends in error saying so, and a restart continues from there', async () => {
    await runs.start('fresh', alpha());
    await runs.until('octocat/fresh', (record) => record.status === 'complete');
    const whole = await rawChunks('octocat.fresh.attempt-1');
    expect(whole).toBeGreaterThan(2);

    stepFunctions.refuse = /^octocat\.refused\.attempt-1\.part-/;
    await runs.start('refused', alpha());
    const failed = await runs.until('octocat/refused', (record) => record.status === 'error');
    stepFunctions.refuse = undefined;
    expect(stepFunctions.refused[0]).toBe('octocat.refused.attempt-1.part-2');
    expect(failed.failed_step).toBe('raw');
    expect(failed.error_message).toMatch(
      /could not continue in a new workflow execution.*ExecutionLimitExceeded.*restart the import to continue/,
    );
    const first = await rawChunks('octocat.refused.attempt-1');
    expect(first).toBe(2);

    const restarted = await runs.api('PATCH', '/repos/octocat/refused/import');
    expect(restarted.status).toBe(200);
    await runs.until('octocat/refused', (record) => record.status === 'complete');
    expect(await rawChunks('octocat.refused.attempt-2')).toBe(whole - first);
    expect(await runs.outcome('octocat/refused', stack.webUrl)).toEqual(
      await runs.outcome('octocat/fresh', stack.webUrl),
    );
  }, 300_000);
});
