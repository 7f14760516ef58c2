/**
 * A repository's import, its authors and its large files (spec §2.4–2.7). The API side creates,
 * changes and cancels imports; the worker side (Step Functions tasks) records what it finds. Every
 * worker write is conditional on `attempt = :attempt`, so a stopped attempt's late writes are
 * dropped (they return `false`). Attempt numbers never repeat within a repository: a new import
 * starts after the last attempt of the one before (kept on the repository item as
 * `lastImportAttempt`), so neither an execution name nor the attempt condition is ever reused.
 */
import { createHash } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Finding, FindingEntry, FindingKind, StoredReport } from '#domain/import-report';
import type {
  FailedStep,
  Import,
  ImportAuthor,
  ImportStatus,
  LargeFile,
  ProjectChoice,
  UseLfs,
  Vcs,
  WaitingFor,
} from '#domain/imports';
import {
  conditionalWrite,
  db,
  getItems,
  itemOf,
  now,
  queryAll,
  type TransactItem,
  tableName,
  transact,
  transactWithRetry,
} from './client.ts';
import { nextId } from './counters.ts';
import {
  importAuthorKey,
  importAuthorRemoteKey,
  importItemsPrefix,
  importKey,
  importLargeFilesKey,
  importReportKey,
  repoKey,
  repoPartition,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

// ---- Mapping items ------------------------------------------------------------------------

const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const nullableNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

function toChoice(value: unknown): ProjectChoice {
  const item = value as Record<string, unknown>;
  const tfvcProject = optionalString(item.tfvcProject);
  const path = optionalString(item.path);
  return {
    vcs: String(item.vcs) as Vcs,
    humanName: String(item.humanName),
    ...(tfvcProject === undefined ? {} : { tfvcProject }),
    ...(path === undefined ? {} : { path }),
  };
}

/** Stored form of a project choice: explicit fields, never a client's object. */
const choiceItem = (choice: ProjectChoice): Record<string, string> => ({
  vcs: choice.vcs,
  humanName: choice.humanName,
  ...(choice.tfvcProject === undefined ? {} : { tfvcProject: choice.tfvcProject }),
  ...(choice.path === undefined ? {} : { path: choice.path }),
});

function toImport(item: Record<string, unknown>): Import {
  const optional = {
    tfvcProject: optionalString(item.tfvcProject),
    chosenProject: item.chosenProject ? toChoice(item.chosenProject) : undefined,
    failedStep: optionalString(item.failedStep) as FailedStep | undefined,
    errorMessage: optionalString(item.errorMessage),
    projectChoices: Array.isArray(item.projectChoices) ? item.projectChoices.map(toChoice) : undefined,
    waitingFor: optionalString(item.waitingFor) as WaitingFor | undefined,
    taskToken: optionalString(item.taskToken),
    executionArn: optionalString(item.executionArn),
  };
  return {
    ownerLogin: String(item.ownerLogin),
    repoName: String(item.repoName),
    attempt: Number(item.attempt),
    importId: Number(item.importId),
    vcs: (optionalString(item.vcs) as Vcs | undefined) ?? null,
    vcsUrl: String(item.vcsUrl),
    useLfs: String(item.useLfs) as UseLfs,
    status: String(item.status) as ImportStatus,
    commitCount: nullableNumber(item.commitCount),
    percent: nullableNumber(item.percent),
    pushPercent: nullableNumber(item.pushPercent),
    hasLargeFiles: Boolean(item.hasLargeFiles),
    largeFilesCount: Number(item.largeFilesCount ?? 0),
    largeFilesSize: Number(item.largeFilesSize ?? 0),
    authorsCount: Number(item.authorsCount ?? 0),
    hasCredentials: typeof item.sealedCredentials === 'string',
    ownerPushed: item.ownerPushed === true,
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...(Object.fromEntries(
      Object.entries(optional).filter(([, value]) => value !== undefined),
    ) as Partial<Import>),
  };
}

const toAuthor = (item: Record<string, unknown>): ImportAuthor => ({
  id: Number(item.id),
  remoteId: String(item.remoteId),
  remoteName: String(item.remoteName),
  email: String(item.email),
  name: String(item.name),
});

// ---- Reads --------------------------------------------------------------------------------

async function importItem(owner: string, repo: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: importKey(owner, repo), ConsistentRead: true }),
  );
  return Item;
}

/** The repository's import (one strongly consistent GetItem), or undefined. */
export async function getImport(owner: string, repo: string): Promise<Import | undefined> {
  const item = await importItem(owner, repo);
  return item ? toImport(item) : undefined;
}

/** The import's sealed credentials, with the import id their seal is bound to (worker side only). */
export async function getSealedCredentials(
  owner: string,
  repo: string,
): Promise<{ readonly importId: number; readonly sealed: string } | undefined> {
  const item = await importItem(owner, repo);
  return typeof item?.sealedCredentials === 'string'
    ? { importId: Number(item.importId), sealed: item.sealedCredentials }
    : undefined;
}

// ---- API side -----------------------------------------------------------------------------

export interface NewImport {
  readonly ownerLogin: string;
  readonly repoName: string;
  readonly importId: number;
  readonly vcs: Vcs | null;
  readonly vcsUrl: string;
  readonly tfvcProject?: string | undefined;
  readonly status: ImportStatus;
  readonly sealedCredentials?: string | undefined;
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
    useLfs: 'undecided',
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

/** What the import item held before a change that took a paused execution's task token. */
export interface TakenToken {
  readonly taskToken?: string | undefined;
  readonly executionArn?: string | undefined;
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
 * and token dropped. Conditional on the attempt (and status) read. False when the import changed.
 */
export async function beginAttempt(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  status: ImportStatus,
): Promise<boolean> {
  return update(owner, repo, read.attempt, {
    set: { attempt: read.attempt + 1, status, commitCount: null, percent: null, pushPercent: null },
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
): Promise<MapOutcome> {
  const set: Record<string, unknown> = { updatedAt: now() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.email !== undefined) set.email = changes.email;
  const names = Object.keys(set);
  const importCondition =
    'importId = :id AND attempt = :attempt AND #status = :status AND (attribute_not_exists(ownerPushed) OR ownerPushed <> :yes)';
  const importValues = {
    ':id': read.importId,
    ':attempt': read.attempt,
    ':status': read.status,
    ':yes': true,
  };
  const importItemWrite: TransactItem = republish
    ? {
        Update: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          UpdateExpression:
            'SET attempt = :next, #status = :mapping, pushPercent = :null, updatedAt = :now REMOVE failedStep, errorMessage, waitingFor, taskToken, executionArn',
          ConditionExpression: importCondition,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ...importValues,
            ':next': read.attempt + 1,
            ':mapping': 'mapping',
            ':null': null,
            ':now': now(),
          },
        },
      }
    : {
        ConditionCheck: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          ConditionExpression: importCondition,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: importValues,
        },
      };
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
      importItemWrite,
    ],
    'mapAuthor',
  );
  if (outcome === 'ok') return 'ok';
  return outcome.failedIndex === 0 ? 'no-author' : 'import-changed';
}

export async function getAuthor(
  owner: string,
  repo: string,
  importId: number,
  authorId: number,
): Promise<ImportAuthor | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importAuthorKey(owner, repo, importId, authorId),
      ConsistentRead: true,
    }),
  );
  return Item ? toAuthor(Item) : undefined;
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
  for (let i = 0; i < items.length; i += 25) {
    let pending: Record<string, unknown>[] | undefined = items
      .slice(i, i + 25)
      .map((item) => ({ DeleteRequest: { Key: { PK: item.PK, SK: item.SK } } }));
    while (pending && pending.length > 0) {
      const result = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
      pending = result.UnprocessedItems?.[tableName()] as Record<string, unknown>[] | undefined;
    }
  }
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

// ---- Worker side --------------------------------------------------------------------------

export interface Progress {
  readonly status?: ImportStatus;
  readonly percent?: number | null;
  readonly commitCount?: number | null;
  readonly pushPercent?: number | null;
}

/** Records progress of the attempt; false when it is no longer the import's attempt. */
export function recordProgress(
  owner: string,
  repo: string,
  attempt: number,
  progress: Progress,
): Promise<boolean> {
  const set: Record<string, unknown> = {};
  if (progress.status !== undefined) set.status = progress.status;
  if (progress.percent !== undefined) set.percent = progress.percent;
  if (progress.commitCount !== undefined) set.commitCount = progress.commitCount;
  if (progress.pushPercent !== undefined) set.pushPercent = progress.pushPercent;
  return update(owner, repo, attempt, { set });
}

export interface StatusExtra {
  readonly failedStep?: FailedStep;
  readonly errorMessage?: string;
  readonly projectChoices?: readonly ProjectChoice[];
  readonly vcs?: Vcs;
}

/**
 * Moves the attempt to `status`: no longer waiting for anyone (task token cleared); `failedStep`
 * and `errorMessage` cleared unless given. False when it is no longer the import's attempt.
 */
export function enterStatus(
  owner: string,
  repo: string,
  attempt: number,
  status: ImportStatus,
  extra: StatusExtra = {},
): Promise<boolean> {
  const set: Record<string, unknown> = { status };
  const remove = ['waitingFor', 'taskToken'];
  if (extra.failedStep !== undefined) set.failedStep = extra.failedStep;
  else remove.push('failedStep');
  if (extra.errorMessage !== undefined) set.errorMessage = extra.errorMessage;
  else remove.push('errorMessage');
  if (extra.projectChoices !== undefined) set.projectChoices = extra.projectChoices.map(choiceItem);
  if (extra.vcs !== undefined) set.vcs = extra.vcs;
  return update(owner, repo, attempt, { set, remove });
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
): Promise<boolean | 'already-decided'> {
  const written = await update(owner, repo, attempt, {
    set: { status, waitingFor, taskToken },
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
 * ids. Returns how many were added; false when it is no longer the import's attempt.
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
    const batch = unique.slice(i, i + AUTHORS_PER_TRANSACTION);
    const pointers = batch.map((author) =>
      importAuthorRemoteKey(owner, repo, importId, remoteIdHash(author.remoteId)),
    );
    const known = await getItems(pointers, true);
    const fresh = batch.filter((_, n) => !itemOf(known, pointers[n] ?? { PK: '', SK: '' }));
    if (fresh.length === 0) continue;
    const result = await addFresh(owner, repo, importId, attempt, fresh);
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
  const ids: number[] = [];
  for (const _ of fresh) ids.push(await nextId('import-author'));
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

/** The import's authors with an id above `since` (all when absent), ascending; strongly consistent, every page. */
export async function listAuthors(
  owner: string,
  repo: string,
  importId: number,
  since?: number,
): Promise<ImportAuthor[]> {
  const prefix = `${importItemsPrefix(importId)}AUTHOR#`;
  const from = importAuthorKey(owner, repo, importId, (since ?? 0) + 1).SK;
  const { items } = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': repoPartition(owner, repo), ':from': from, ':to': `${prefix}~` },
    ConsistentRead: true,
  });
  return items.map(toAuthor);
}

/**
 * At most this many large files (or findings of one kind) are listed (one item holds them, and
 * DynamoDB items end at 400 KB); `large_files_count` and `large_files_size` still count every one.
 */
export const MAX_LISTED_LARGE_FILES = 1000;
const MAX_LISTED_BYTES = 300 * 1024;

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

export async function listLargeFiles(owner: string, repo: string, importId: number): Promise<LargeFile[]> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importLargeFilesKey(owner, repo, importId),
      ConsistentRead: true,
    }),
  );
  const files = Array.isArray(Item?.files) ? (Item.files as Record<string, unknown>[]) : [];
  return files.map((file) => ({
    refName: String(file.refName),
    path: String(file.path),
    oid: String(file.oid),
    size: Number(file.size),
  }));
}

// ---- Report ---------------------------------------------------------------------------------

/**
 * Replaces the import's report with the raw step's findings so far (each kind's first entries,
 * within one item's limits: the listed entries of all kinds share `MAX_LISTED_BYTES`, each kind's
 * `count` still counts every one). False when it is no longer the import's attempt.
 */
export async function setImportReport(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  report: StoredReport,
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
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          ConditionExpression: 'importId = :id AND attempt = :attempt',
          ExpressionAttributeValues: { ':id': importId, ':attempt': attempt },
        },
      },
    ],
    'setImportReport',
  );
  return outcome === 'ok';
}

/** The import's report; undefined until its raw step has recorded one. */
export async function getImportReport(
  owner: string,
  repo: string,
  importId: number,
): Promise<StoredReport | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importReportKey(owner, repo, importId),
      ConsistentRead: true,
    }),
  );
  if (!Item) return undefined;
  const stored = (Item.findings ?? {}) as Record<string, { count?: unknown; listed?: unknown }>;
  // Kinds as stored; the domain's report keeps those it knows (`composeReport`).
  const findings: Partial<Record<FindingKind, Finding>> = {};
  for (const [kind, finding] of Object.entries(stored)) {
    const listed = Array.isArray(finding.listed) ? (finding.listed as FindingEntry[]) : [];
    findings[kind as FindingKind] = { count: Number(finding.count ?? listed.length), listed };
  }
  return { rawDone: Item.rawDone === true, findings };
}

// ---- One conditional UpdateItem -----------------------------------------------------------

interface Change {
  readonly set: Readonly<Record<string, unknown>>;
  readonly remove?: readonly string[];
  /** Also require this status. */
  readonly status?: ImportStatus;
  /** Also require this waiting state (null: not waiting). */
  readonly waitingFor?: WaitingFor | null;
  /** Also require `useLfs` to be this. */
  readonly useLfs?: UseLfs;
  /** Also require that the owner has not pushed. */
  readonly notPushed?: true;
}

/**
 * The one builder of import updates: attribute names come from this module's code (the `set` and
 * `remove` keys above), never from a request. Always conditional on the attempt.
 */
function updateInput(owner: string, repo: string, attempt: number, change: Change, returnOld: boolean) {
  const set = { ...change.set, updatedAt: now() };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':attempt': attempt };
  const assignments = Object.entries(set).map(([name, value], n) => {
    names[`#s${n}`] = name;
    values[`:s${n}`] = value;
    return `#s${n} = :s${n}`;
  });
  const removals = (change.remove ?? []).map((name, n) => {
    names[`#r${n}`] = name;
    return `#r${n}`;
  });
  const conditions = ['attempt = :attempt'];
  if (change.status !== undefined) {
    names['#cstatus'] = 'status';
    values[':cstatus'] = change.status;
    conditions.push('#cstatus = :cstatus');
  }
  if (change.waitingFor !== undefined) {
    names['#cwaiting'] = 'waitingFor';
    if (change.waitingFor === null) conditions.push('attribute_not_exists(#cwaiting)');
    else {
      values[':cwaiting'] = change.waitingFor;
      conditions.push('#cwaiting = :cwaiting');
    }
  }
  if (change.useLfs !== undefined) {
    values[':clfs'] = change.useLfs;
    conditions.push('useLfs = :clfs');
  }
  if (change.notPushed) {
    values[':cyes'] = true;
    conditions.push('(attribute_not_exists(ownerPushed) OR ownerPushed <> :cyes)');
  }
  return new UpdateCommand({
    TableName: tableName(),
    Key: importKey(owner, repo),
    UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(returnOld ? { ReturnValues: 'ALL_OLD' as const } : {}),
  });
}

async function update(owner: string, repo: string, attempt: number, change: Change): Promise<boolean> {
  return (await conditionalWrite(db().send(updateInput(owner, repo, attempt, change, false)))) !== false;
}

/** An update that also takes the paused execution's task token (returned from the old item). */
async function takeToken(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  change: Change,
): Promise<TakenToken | false> {
  const result = await conditionalWrite(
    db().send(
      updateInput(
        owner,
        repo,
        read.attempt,
        {
          status: read.status,
          ...change,
          remove: [...(change.remove ?? []), 'waitingFor', 'taskToken'],
        },
        true,
      ),
    ),
  );
  if (result === false) return false;
  return {
    taskToken: optionalString(result.Attributes?.taskToken),
    executionArn: optionalString(result.Attributes?.executionArn),
  };
}

/** Exposed for unit tests: the update an import change sends (names fixed, values bound). */
export const importUpdateInput = (owner: string, repo: string, attempt: number, change: Change) =>
  updateInput(owner, repo, attempt, change, false).input;
