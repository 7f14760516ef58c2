import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { type ImportRuns, octocatRuns } from '#test/import-runs';
import { startTestStack } from '#test/stack';

/**
 * Issue 36 item 3, an import whose execution ended without writing a word: stopped in the Step
 * Functions console while its raw step runs (or timed out, or failed outside the workflow's Catch),
 * the import item still says `importing`. The owner must see what happened and be able to go on:
 * a read of the import, once it has been quiet a while, finds the execution ended and answers
 * `error` (failed_step, an error_message that says the execution stopped and that a restart goes
 * on); the restart (an empty PATCH) then continues from the raw chunks the stopped execution
 * finished, and ends identical to a fresh import. The TFVC origin imports one changeset per raw
 * chunk with a 1 ms chunk budget (8 chunks).
 */
process.env[ENV.importChunkSeconds] = '0.001';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let tfvc: TfvcServer;
let runs: ImportRuns;
/** An origin that accepts connections and never answers (detection waits on it). */
let silent: Server;
const held = new Set<Socket>();
/** The import of the TFVC stand-in's project Alpha. */
const alpha = () => ({ vcs_url: tfvc.collectionUrl, vcs: 'tfvc', tfvc_project: 'Alpha' });

beforeAll(async () => {
  stack = await startTestStack();
  tfvc = await serveTfvc({ projects: tfvcHistory(), maxPage: 3 });
  runs = await octocatRuns(stack);
  silent = createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await tfvc?.close();
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
});

describe('an import whose execution was stopped outside the workflow', () => {
  it('reads as error once quiet, and a restart continues from what was imported', async () => {
    await runs.start('fresh', alpha());
    await runs.until('octocat/fresh', (record) => record.status === 'complete');
    const whole = await runs.rounds('octocat.fresh.attempt-1', 'ImportRawHistory');

    await runs.start('stopped', alpha());
    const deadline = Date.now() + 60_000;
    while ((await runs.rounds('octocat.stopped.attempt-1', 'ImportRawHistory')).succeeded < 3) {
      if (Date.now() > deadline) throw new Error('the raw step never got to its third chunk');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await runs.stop('octocat.stopped.attempt-1', 'stopped in the console');
    const first = await runs.rounds('octocat.stopped.attempt-1', 'ImportRawHistory');
    expect(first.succeeded).toBeLessThan(whole.succeeded);

    // Nothing wrote a status: a read finds the execution ended and says so.
    const failed = await runs.until('octocat/stopped', (record) => record.status === 'error', 60_000);
    expect(failed.failed_step).toBe('raw');
    expect(failed.error_message).toMatch(/stopped \(ABORTED\).*restart/i);

    const restarted = await runs.api('PATCH', '/repos/octocat/stopped/import');
    expect(restarted.status).toBe(200);
    await runs.until('octocat/stopped', (record) => record.status === 'complete');
    const second = await runs.rounds('octocat.stopped.attempt-2', 'ImportRawHistory');
    // The chunk that ran when the execution stopped may have committed after it: one fewer then.
    expect(second.succeeded).toBeLessThanOrEqual(whole.succeeded - first.succeeded);
    expect(await runs.outcome('octocat/stopped', stack.webUrl)).toEqual(
      await runs.outcome('octocat/fresh', stack.webUrl),
    );
  }, 300_000);

  it('reads a detection that stopped as error in detection, and a restart detects again', async () => {
    const { port } = silent.address() as AddressInfo;
    await runs.start('silent', { vcs_url: `http://127.0.0.1:${port}/origin` });
    const deadline = Date.now() + 60_000;
    while ((await runs.rounds('octocat.silent.attempt-1', 'Detect')).entered < 1) {
      if (Date.now() > deadline) throw new Error('detection never started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await runs.stop('octocat.silent.attempt-1', 'stopped in the console');

    const failed = await runs.until('octocat/silent', (record) => record.status === 'error', 60_000);
    expect(failed.failed_step).toBe('detection');
    expect(failed.error_message).toMatch(/stopped \(ABORTED\) during detection.*restart the import/);
    const restarted = await runs.api('PATCH', '/repos/octocat/silent/import');
    expect(restarted.status).toBe(200);
    expect(restarted.body.status).toBe('detecting');
  }, 120_000);
});
