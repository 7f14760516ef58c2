/**
 * An import whose execution ended without a word (issue 36 item 3): stopped in the Step Functions
 * console, timed out, or failed outside the workflow's Catch (its history quota, a Catch state that
 * failed itself). No step wrote a status, so the item would say `importing` (or `detecting`,
 * `mapping`, `pushing`) for ever. A read of such an import that has been quiet a while asks Step Functions;
 * when the execution has ended, the import moves to `error` in the step it was in, with a message
 * saying a restart continues (`import-resume.ts`), as GitHub's importer shows a failed import.
 */
import { getImport } from '#data/imports/items';
import { recordInterrupted } from '#data/imports/requests';
import { interruptedFailure, worthCheckingEnded } from '#domain/import-resume';
import type { Import } from '#domain/imports';
import { log } from '#shared/log';
import { statusChanged } from './import-events.ts';
import { endedExecutionStatus, executionArnOf } from './import-workflow.ts';
import { announceImportOutcome } from './webhook-events.ts';

/**
 * `record`, or the import as it now is when its execution turned out to have ended without a
 * word. Step Functions that does not answer leaves the import as it is (the next read asks again).
 */
export async function noticeInterrupted(record: Import): Promise<Import> {
  if (!worthCheckingEnded(record, Date.now())) return record;
  const executionArn = executionArnOf(record);
  if (!executionArn) return record;
  const ended = await endedExecutionStatus(executionArn).catch((error: unknown) => {
    log('warn', 'DescribeExecution failed; the import is read as it is', { error: (error as Error).name });
    return undefined;
  });
  if (ended === undefined) return record;
  const { ownerLogin: owner, repoName: repo, attempt } = record;
  const written = await recordInterrupted(
    owner,
    repo,
    attempt,
    record.status,
    interruptedFailure(record.status, ended),
  );
  if (!written) return (await getImport(owner, repo)) ?? record;
  log('warn', 'import execution ended without a status', { owner, repo, attempt, executionStatus: ended });
  await statusChanged(owner, repo, record.status, { attempt }, written);
  await announceImportOutcome({ owner, repo, importId: record.importId, attempt }, 'failure');
  return written;
}
