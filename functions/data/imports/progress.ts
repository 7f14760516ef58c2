/**
 * The worker side of an import (the Step Functions tasks): what an attempt finds and how far it
 * got. Progress, status and waiting for a person, the authors found, the large files and the
 * report. Every write is conditional on `attempt = :attempt`, so a stopped attempt's late writes
 * are dropped (they return `false`).
 */
import { createHash } from 'node:crypto';
import type { Finding, FindingEntry, FindingKind, StoredReport } from '#domain/import-report';
import type {
  FailedStep,
  Import,
  ImportAuthor,
  ImportStatus,
  LargeFile,
  ProjectChoice,
  Vcs,
  WaitingFor,
} from '#domain/imports';
import { now, type TransactItem, tableName, transactWithRetry } from '../client.ts';
import { nextIds } from '../counters.ts';
import {
  importAuthorKey,
  importAuthorRemoteKey,
  importKey,
  importLargeFilesKey,
  importReportKey,
} from '../keys.ts';
import { ITEM_ABSENT, typed } from '../table.ts';
import { choiceItem, getImport, MAX_LISTED_BYTES } from './items.ts';
import { update, updateAndRead } from './update.ts';

export interface Progress {
  readonly status?: ImportStatus;
  readonly percent?: number | null;
  readonly commitCount?: number | null;
  readonly pushPercent?: number | null;
}

/** A transaction's condition that `attempt` of import `importId` is still the repository's current one. */
export const attemptIsCurrent = (
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
): TransactItem => ({
  ConditionCheck: {
    TableName: tableName(),
    Key: importKey(owner, repo),
    ConditionExpression: 'importId = :id AND attempt = :attempt',
    ExpressionAttributeValues: { ':id': importId, ':attempt': attempt },
  },
});
/**
 * A transaction's write of progress (no status: a status change has its events), conditional as
 * `attemptIsCurrent` is.
 */
const progressItem = (
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  progress: Omit<Progress, 'status'>,
): TransactItem => {
  const set = { ...progress, updatedAt: now() };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':id': importId, ':attempt': attempt };
  const assignments = Object.entries(set)
    .filter(([, value]) => value !== undefined)
    .map(([name, value], n) => {
      names[`#s${n}`] = name;
      values[`:s${n}`] = value;
      return `#s${n} = :s${n}`;
    });
  return {
    Update: {
      TableName: tableName(),
      Key: importKey(owner, repo),
      UpdateExpression: `SET ${assignments.join(', ')}`,
      ConditionExpression: 'importId = :id AND attempt = :attempt',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
};

/**
 * A status write that the writer knows moves the status away from `from` (the status it read):
 * the change is counted in the item (`statusSequence`) with what it moved from, in the same write,
 * so that a step run again finds how to name the change it announces again.
 */
export interface StatusMove {
  readonly from: ImportStatus | null;
}

const counted = (attempt: number, status: ImportStatus | undefined, move: StatusMove | undefined) =>
  move && status !== undefined
    ? { set: { lastStatusChange: { attempt, from: move.from, to: status } }, add: { statusSequence: 1 } }
    : { set: {} };

/** Records progress of the attempt: the import as written, or false when it is no longer the import's attempt. */
export function recordProgress(
  owner: string,
  repo: string,
  attempt: number,
  progress: Progress,
  move?: StatusMove,
): Promise<Import | false> {
  const { set: moved, ...add } = counted(attempt, progress.status, move);
  const set: Record<string, unknown> = { ...moved };
  if (progress.status !== undefined) set.status = progress.status;
  if (progress.percent !== undefined) set.percent = progress.percent;
  if (progress.commitCount !== undefined) set.commitCount = progress.commitCount;
  if (progress.pushPercent !== undefined) set.pushPercent = progress.pushPercent;
  return updateAndRead(owner, repo, attempt, { set, ...add });
}

export interface StatusExtra {
  readonly failedStep?: FailedStep;
  readonly errorMessage?: string;
  readonly projectChoices?: readonly ProjectChoice[];
  readonly vcs?: Vcs;
}

/**
 * Moves the attempt to `status`: no longer waiting for anyone (task token cleared); `failedStep`
 * and `errorMessage` cleared unless given. The import as written, or false when it is no longer
 * the import's attempt.
 */
export function enterStatus(
  owner: string,
  repo: string,
  attempt: number,
  status: ImportStatus,
  extra: StatusExtra = {},
  move?: StatusMove,
): Promise<Import | false> {
  const { set: moved, ...add } = counted(attempt, status, move);
  const set: Record<string, unknown> = { ...moved, status };
  const remove = ['waitingFor', 'taskToken'];
  if (extra.failedStep !== undefined) set.failedStep = extra.failedStep;
  else remove.push('failedStep');
  if (extra.errorMessage !== undefined) set.errorMessage = extra.errorMessage;
  else remove.push('errorMessage');
  if (extra.projectChoices !== undefined) set.projectChoices = extra.projectChoices.map(choiceItem);
  if (extra.vcs !== undefined) set.vcs = extra.vcs;
  return updateAndRead(owner, repo, attempt, { set, remove, ...add });
}

/**
 * Pauses the attempt for a person: status, what it waits for and the task token the API resumes it
 * with. For `lfs_choice` the owner must not have decided yet: `'already-decided'` when they have
 * (the worker then goes on by itself). False when it is no longer the import's attempt.
 */
export async function waitForPerson(
  owner: string,
  repo: string,
  attempt: number,
  waitingFor: WaitingFor,
  taskToken: string,
  status: ImportStatus,
  move?: StatusMove,
): Promise<boolean | 'already-decided'> {
  const { set: moved, ...add } = counted(attempt, status, move);
  const written = await update(owner, repo, attempt, {
    set: { ...moved, status, waitingFor, taskToken },
    ...add,
    ...(waitingFor === 'lfs_choice' ? { useLfs: 'undecided' as const } : {}),
  });
  if (written || waitingFor !== 'lfs_choice') return written;
  const current = await getImport(owner, repo);
  return current?.attempt === attempt && current.useLfs !== 'undecided' ? 'already-decided' : false;
}

/** `sha256(remoteId)` names an author's pointer: remote ids are arbitrary text of any length. */
const remoteIdHash = (remoteId: string): string => createHash('sha256').update(remoteId).digest('hex');

/** Authors per transaction: a pointer and an author item each, plus the import's count (≤ 100 items). */
const AUTHORS_PER_TRANSACTION = 40;

/**
 * Adds the authors not known yet (one author per remote id, through a pointer item), with
 * increasing ids, and raises `authorsCount` in the same transaction. Idempotent for known remote
 * ids. Returns how many were added; false when it is no longer the import's attempt. Written for
 * authors the caller found absent (`listAuthors`): each batch is one transaction, nothing read
 * first; when a pointer exists after all (a repeated chunk, another writer) the batch's authors
 * are added one by one, the known one skipped.
 */
export async function addAuthors(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  authors: readonly Omit<ImportAuthor, 'id'>[],
): Promise<number | false> {
  const unique = [...new Map(authors.map((author) => [author.remoteId, author])).values()];
  let added = 0;
  for (let i = 0; i < unique.length; i += AUTHORS_PER_TRANSACTION) {
    const result = await addFresh(
      owner,
      repo,
      importId,
      attempt,
      unique.slice(i, i + AUTHORS_PER_TRANSACTION),
    );
    if (result === false) return false;
    added += result;
  }
  return added;
}

async function addFresh(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  fresh: readonly Omit<ImportAuthor, 'id'>[],
): Promise<number | false> {
  const ids = await nextIds('import-author', fresh.length);
  const timestamp = now();
  const items: TransactItem[] = fresh.flatMap((author, n) => {
    const id = ids[n] ?? 0;
    return [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...importAuthorRemoteKey(owner, repo, importId, remoteIdHash(author.remoteId)),
            ...typed('ImportAuthorPointer'),
            authorId: id,
            createdAt: timestamp,
            updatedAt: timestamp,
          },
          ConditionExpression: ITEM_ABSENT,
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...importAuthorKey(owner, repo, importId, id),
            ...typed('ImportAuthor'),
            id,
            remoteId: author.remoteId,
            remoteName: author.remoteName,
            email: author.email,
            name: author.name,
            createdAt: timestamp,
            updatedAt: timestamp,
          },
        },
      },
    ];
  });
  items.push({
    Update: {
      TableName: tableName(),
      Key: importKey(owner, repo),
      UpdateExpression: 'ADD authorsCount :n SET updatedAt = :now',
      ConditionExpression: 'importId = :id AND attempt = :attempt',
      ExpressionAttributeValues: {
        ':n': fresh.length,
        ':now': timestamp,
        ':id': importId,
        ':attempt': attempt,
      },
    },
  });
  const outcome = await transactWithRetry(items, 'addAuthors');
  if (outcome === 'ok') return fresh.length;
  if (outcome.failedIndex === items.length - 1) return false;
  // Another writer added one of these meanwhile: add them one by one (known ones are skipped).
  if (fresh.length === 1) return 0;
  let added = 0;
  for (const author of fresh) {
    const result = await addAuthors(owner, repo, importId, attempt, [author]);
    if (result === false) return false;
    added += result;
  }
  return added;
}

/**
 * At most this many large files (or findings of one kind) are listed (one item holds them, and
 * DynamoDB items end at 400 KB); `large_files_count` and `large_files_size` still count every one.
 */
export const MAX_LISTED_LARGE_FILES = 1000;

/**
 * Replaces the import's large files and sets `hasLargeFiles`, `largeFilesCount`, `largeFilesSize`
 * on the import in the same transaction. False when it is no longer the import's attempt.
 */
export async function setLargeFiles(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  files: readonly LargeFile[],
): Promise<boolean> {
  const listed: LargeFile[] = [];
  let bytes = 0;
  for (const file of files) {
    const entry = { refName: file.refName, path: file.path, oid: file.oid, size: file.size };
    bytes += Buffer.byteLength(JSON.stringify(entry));
    if (listed.length >= MAX_LISTED_LARGE_FILES || bytes > MAX_LISTED_BYTES) break;
    listed.push(entry);
  }
  const timestamp = now();
  const total = files.reduce((sum, file) => sum + file.size, 0);
  const outcome = await transactWithRetry(
    [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...importLargeFilesKey(owner, repo, importId),
            ...typed('ImportLargeFiles'),
            files: listed,
            createdAt: timestamp,
            updatedAt: timestamp,
          },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          UpdateExpression:
            'SET hasLargeFiles = :has, largeFilesCount = :count, largeFilesSize = :size, updatedAt = :now',
          ConditionExpression: 'importId = :id AND attempt = :attempt',
          ExpressionAttributeValues: {
            ':has': files.length > 0,
            ':count': files.length,
            ':size': total,
            ':now': timestamp,
            ':id': importId,
            ':attempt': attempt,
          },
        },
      },
    ],
    'setLargeFiles',
  );
  return outcome === 'ok';
}

/**
 * Replaces the import's report with the raw step's findings so far (each kind's first entries,
 * within one item's limits: the listed entries of all kinds share `MAX_LISTED_BYTES`, each kind's
 * `count` still counts every one), and `progress` in the same transaction. False when it is no
 * longer the import's attempt.
 */
export async function setImportReport(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  report: StoredReport,
  progress?: Omit<Progress, 'status'>,
): Promise<boolean> {
  const kinds = Object.entries(report.findings) as [FindingKind, Finding][];
  const share = MAX_LISTED_BYTES / Math.max(1, kinds.length);
  const findings: Record<string, Finding> = {};
  for (const [kind, finding] of kinds) {
    const listed: FindingEntry[] = [];
    let bytes = 0;
    for (const entry of finding.listed) {
      bytes += Buffer.byteLength(JSON.stringify(entry));
      if (listed.length >= MAX_LISTED_LARGE_FILES || bytes > share) break;
      listed.push(entry);
    }
    findings[kind] = { count: finding.count, listed };
  }
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...importReportKey(owner, repo, importId),
            ...typed('ImportReport'),
            rawDone: report.rawDone,
            findings,
            createdAt: timestamp,
            updatedAt: timestamp,
          },
        },
      },
      progress
        ? progressItem(owner, repo, importId, attempt, progress)
        : attemptIsCurrent(owner, repo, importId, attempt),
    ],
    'setImportReport',
  );
  return outcome === 'ok';
}
