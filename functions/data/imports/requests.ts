/**
 * The API side of an import (spec §4.5): what people ask for. Starting, cancelling and restarting
 * an import, its credentials and project choice, the LFS choice and the authors mapping. Attempt
 * numbers never repeat within a repository: a new import starts after the last attempt of the one
 * before (kept on the repository item as `lastImportAttempt`), so neither an execution name nor the
 * attempt condition is ever reused.
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  FailedStep,
  Import,
  ImportBatchRef,
  ImportChoices,
  ImportStatus,
  ProjectChoice,
  UseLfs,
  Vcs,
} from '#domain/imports';
import {
  batchWrite,
  conditionalWrite,
  db,
  now,
  queryAll,
  type TransactItem,
  tableName,
  transact,
  transactWithRetry,
} from '../client.ts';
import { importAuthorKey, importItemsPrefix, importKey, repoKey, repoPartition } from '../keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from '../table.ts';
import { choiceItem, choicesItem, toImport } from './items.ts';
import { type TakenToken, takeToken, update, updateAndRead } from './update.ts';

export type { TakenToken };

export interface NewImport {
  readonly ownerLogin: string;
  readonly repoName: string;
  readonly importId: number;
  readonly vcs: Vcs | null;
  readonly vcsUrl: string;
  readonly tfvcProject?: string | undefined;
  readonly status: ImportStatus;
  readonly choices: ImportChoices;
  readonly sealedCredentials?: string | undefined;
  /** A project of a multi-project origin chosen up front (a batch): the raw import starts at once. */
  readonly chosenProject?: ProjectChoice | undefined;
  /** The LFS choice made up front (a batch); absent: `undecided`. */
  readonly useLfs?: UseLfs | undefined;
  /** The batch the import belongs to. */
  readonly batch?: ImportBatchRef | undefined;
}

export type CreateOutcome =
  | { readonly kind: 'created'; readonly record: Import }
  | { readonly kind: 'import-exists' }
  /** The repository is gone, has content, or another import was cancelled meanwhile: read it again. */
  | { readonly kind: 'repository-refused' };

/**
 * Creates the import in one transaction with a check of its repository: the import item must be
 * absent, the repository present, empty, and its `lastImportAttempt` what was read (the new
 * import's first attempt is the one after it).
 */
export async function createImport(input: NewImport): Promise<CreateOutcome> {
  const { Item: repository } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: repoKey(input.ownerLogin, input.repoName),
      ConsistentRead: true,
      ProjectionExpression: 'lastImportAttempt',
    }),
  );
  const lastAttempt =
    repository?.lastImportAttempt === undefined ? undefined : Number(repository.lastImportAttempt);
  const timestamp = now();
  const item = {
    ...importKey(input.ownerLogin, input.repoName),
    ...typed('Import'),
    ownerLogin: input.ownerLogin,
    repoName: input.repoName,
    importId: input.importId,
    attempt: (lastAttempt ?? 0) + 1,
    vcs: input.vcs,
    vcsUrl: input.vcsUrl,
    ...(input.tfvcProject === undefined ? {} : { tfvcProject: input.tfvcProject }),
    ...(input.chosenProject === undefined ? {} : { chosenProject: choiceItem(input.chosenProject) }),
    ...(input.batch === undefined ? {} : { batchId: input.batch.id, batchEntry: input.batch.entry }),
    useLfs: input.useLfs ?? 'undecided',
    choices: choicesItem(input.choices),
    status: input.status,
    commitCount: null,
    percent: null,
    pushPercent: null,
    hasLargeFiles: false,
    largeFilesCount: 0,
    largeFilesSize: 0,
    authorsCount: 0,
    ownerPushed: false,
    ...(input.sealedCredentials === undefined ? {} : { sealedCredentials: input.sealedCredentials }),
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const outcome = await transactWithRetry(
    [
      { Put: { TableName: tableName(), Item: item, ConditionExpression: ITEM_ABSENT } },
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: repoKey(input.ownerLogin, input.repoName),
          ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(hasContent) OR hasContent = :no) AND ${
            lastAttempt === undefined
              ? 'attribute_not_exists(lastImportAttempt)'
              : 'lastImportAttempt = :last'
          }`,
          ExpressionAttributeValues: {
            ':no': false,
            ...(lastAttempt === undefined ? {} : { ':last': lastAttempt }),
          },
        },
      },
    ],
    'createImport',
  );
  if (outcome === 'ok') return { kind: 'created', record: toImport(item) };
  return outcome.failedIndex === 0 ? { kind: 'import-exists' } : { kind: 'repository-refused' };
}

/** Removes an import whose execution could not be started (no half-made import stays). */
export async function removeUnstartedImport(owner: string, repo: string, importId: number): Promise<void> {
  await conditionalWrite(
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: importKey(owner, repo),
        ConditionExpression: 'importId = :id',
        ExpressionAttributeValues: { ':id': importId },
      }),
    ),
  );
}

/** Records the execution of an attempt; false when the import moved on to another attempt. */
export async function setExecutionArn(
  owner: string,
  repo: string,
  attempt: number,
  executionArn: string,
): Promise<boolean> {
  return update(owner, repo, attempt, { set: { executionArn } });
}

/**
 * An attempt whose execution ended without a word (`import-interrupted.ts`): status `error` with
 * the step and message, on condition that the attempt still has the status it was read with (a
 * step that wrote meanwhile wins). The import as written, or false when it changed.
 */
export function recordInterrupted(
  owner: string,
  repo: string,
  attempt: number,
  from: ImportStatus,
  failure: { readonly failedStep: FailedStep; readonly errorMessage: string },
): Promise<Import | false> {
  return updateAndRead(owner, repo, attempt, {
    set: { status: 'error', failedStep: failure.failedStep, errorMessage: failure.errorMessage },
    remove: ['waitingFor', 'taskToken'],
    status: from,
  });
}

/**
 * Stores new sealed credentials while the import waits for them (`status = :read` of a status that
 * accepts credentials): status `detecting`, the task token taken. False when the import changed.
 */
export async function storeCredentials(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  sealedCredentials: string,
): Promise<TakenToken | false> {
  return takeToken(owner, repo, read, {
    set: { sealedCredentials, status: 'detecting' satisfies ImportStatus },
    remove: ['failedStep', 'errorMessage'],
  });
}

/** Stores the chosen project (status `importing`), taking the task token. False when the import changed. */
export async function storeProjectChoice(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  choice: ProjectChoice,
): Promise<TakenToken | false> {
  return takeToken(owner, repo, read, {
    set: {
      chosenProject: choiceItem(choice),
      vcs: choice.vcs,
      status: 'importing' satisfies ImportStatus,
      ...(choice.tfvcProject === undefined ? {} : { tfvcProject: choice.tfvcProject }),
    },
    remove: ['projectChoices'],
  });
}

/**
 * Starts attempt `nextAttempt` of the import in status `status` (restart, or a republish after a
 * change to a complete import's history): progress and failure cleared, the old execution's ARN
 * and token dropped; with `choices`, the owner's new choices stored with it. Conditional on the
 * attempt (and status) read. The import as written, or false when the import changed.
 */
export async function beginAttempt(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  status: ImportStatus,
  choices?: ImportChoices,
  sync = false,
): Promise<Import | false> {
  return updateAndRead(owner, repo, read.attempt, {
    ...(sync ? { stillFollowing: true } : {}),
    set: {
      attempt: read.attempt + 1,
      status,
      commitCount: null,
      percent: null,
      pushPercent: null,
      ...(choices === undefined ? {} : { choices: choicesItem(choices) }),
    },
    remove: ['failedStep', 'errorMessage', 'waitingFor', 'taskToken', 'executionArn', 'projectChoices'],
    status: read.status,
  });
}

/**
 * Stores the LFS choice. `how` says what else the change does, decided on the state read:
 * `resume` takes the token of an execution waiting for the choice; `republish` begins the next
 * attempt in `mapping` (a complete import with large files is rewritten and pushed again);
 * `store` only stores it (no execution waits for it). Conditional on the attempt, status and
 * waiting state read, and on the owner not having pushed. False when the import changed.
 */
export async function storeUseLfs(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status' | 'waitingFor'>,
  useLfs: Exclude<UseLfs, 'undecided'>,
  how: 'resume' | 'republish' | 'store',
): Promise<TakenToken | false> {
  const guard = { status: read.status, waitingFor: read.waitingFor ?? null, notPushed: true } as const;
  if (how === 'resume') return takeToken(owner, repo, read, { set: { useLfs }, ...guard });
  if (how === 'republish') {
    const done = await update(owner, repo, read.attempt, {
      set: { useLfs, attempt: read.attempt + 1, status: 'mapping', pushPercent: null },
      remove: ['failedStep', 'errorMessage', 'waitingFor', 'taskToken', 'executionArn'],
      ...guard,
    });
    return done ? {} : false;
  }
  return (await update(owner, repo, read.attempt, { set: { useLfs }, ...guard })) ? {} : false;
}

/**
 * The import's part of a transaction that changes its history's inputs (author mappings): on
 * condition that it is the same import, at the attempt and status read, and the owner has not
 * pushed, it counts the change (`mappingVersion`, see `Import`); with `republish`, the import also
 * begins its next attempt in `mapping` (a complete import is rewritten and pushed again).
 */
export function importGuard(
  owner: string,
  repo: string,
  read: Pick<Import, 'importId' | 'attempt' | 'status'>,
  republish: boolean,
): TransactItem {
  const values = {
    ':id': read.importId,
    ':attempt': read.attempt,
    ':status': read.status,
    ':yes': true,
    ':one': 1,
  };
  return {
    Update: {
      TableName: tableName(),
      Key: importKey(owner, repo),
      UpdateExpression: republish
        ? 'SET attempt = :next, #status = :mapping, pushPercent = :null, updatedAt = :now ADD mappingVersion :one REMOVE failedStep, errorMessage, waitingFor, taskToken, executionArn'
        : 'ADD mappingVersion :one',
      ConditionExpression:
        'importId = :id AND attempt = :attempt AND #status = :status AND (attribute_not_exists(ownerPushed) OR ownerPushed <> :yes)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: republish
        ? { ...values, ':next': read.attempt + 1, ':mapping': 'mapping', ':null': null, ':now': now() }
        : values,
    },
  };
}

export type MapOutcome = 'ok' | 'no-author' | 'import-changed';

/**
 * Maps an author (name and/or email) in one transaction with a check of the import: same import,
 * same attempt and status as read, owner not pushed. With `republish`, the import begins its next
 * attempt in `mapping` in the same transaction (a complete import is rewritten and pushed again).
 */
export async function mapAuthor(
  owner: string,
  repo: string,
  read: Pick<Import, 'importId' | 'attempt' | 'status'>,
  authorId: number,
  changes: { readonly name?: string | undefined; readonly email?: string | undefined },
  republish: boolean,
  /** Items written in the same transaction (the mapping's security event). */
  along: readonly TransactItem[] = [],
): Promise<MapOutcome> {
  const set: Record<string, unknown> = { updatedAt: now() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.email !== undefined) set.email = changes.email;
  const names = Object.keys(set);
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importAuthorKey(owner, repo, read.importId, authorId),
          // Attribute names are the fixed ones above, never a client's.
          UpdateExpression: `SET ${names.map((_, n) => `#a${n} = :a${n}`).join(', ')}`,
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeNames: Object.fromEntries(names.map((name, n) => [`#a${n}`, name])),
          ExpressionAttributeValues: Object.fromEntries(names.map((name, n) => [`:a${n}`, set[name]])),
        },
      },
      importGuard(owner, repo, read, republish),
      ...along,
    ],
    'mapAuthor',
  );
  if (outcome === 'ok') return 'ok';
  return outcome.failedIndex === 0 ? 'no-author' : 'import-changed';
}

export type CancelOutcome = 'ok' | 'gone' | 'changed';

/**
 * Deletes the import item (conditional on the import and attempt read) and records its attempt on
 * the repository, so the next import's attempts (and execution names) come after it. With
 * `emptied`, the repository is marked empty in the same transaction (its hosted data is removed).
 */
export async function deleteImport(
  owner: string,
  repo: string,
  read: Pick<Import, 'importId' | 'attempt'>,
  emptied: boolean,
): Promise<CancelOutcome> {
  const outcome = await transact([
    {
      Delete: {
        TableName: tableName(),
        Key: importKey(owner, repo),
        ConditionExpression: 'importId = :id AND attempt = :attempt',
        ExpressionAttributeValues: { ':id': read.importId, ':attempt': read.attempt },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: repoKey(owner, repo),
        UpdateExpression: `SET lastImportAttempt = :attempt${emptied ? ', hasContent = :no' : ''}`,
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':attempt': read.attempt, ...(emptied ? { ':no': false } : {}) },
      },
    },
  ]);
  if (outcome === 'ok') return 'ok';
  if (outcome === 'conflict') return 'changed';
  return outcome.failedIndex === 0 ? 'changed' : 'gone';
}

/** Deletes everything filed under an import's id (authors, their pointers, large files); idempotent. */
export async function deleteImportItems(owner: string, repo: string, importId: number): Promise<number> {
  const { items } = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': repoPartition(owner, repo), ':prefix': importItemsPrefix(importId) },
    ProjectionExpression: 'PK, SK',
    ConsistentRead: true,
  });
  await batchWrite(items.map((item) => ({ DeleteRequest: { Key: { PK: item.PK, SK: item.SK } } })));
  return items.length;
}

/**
 * The owner pushed commits of their own to the repository: the import's history may no longer be
 * rewritten (author mapping and LFS changes answer 422 from now on). No-op without an import.
 */
export async function markOwnerPushed(owner: string, repo: string): Promise<void> {
  await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importKey(owner, repo),
        UpdateExpression: 'SET ownerPushed = :yes, updatedAt = :now',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':yes': true, ':now': now() },
      }),
    ),
  );
}
