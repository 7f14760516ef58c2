/**
 * Import batches (issue 37): the batch item, its entries, and the conditional writes that move its
 * queue. The batch's `running` count is the bound: an entry takes a slot in one transaction with
 * the condition `running < concurrency`, so two starters never exceed it
 * (docs/decisions/0145-import-batch-queue.md).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  BatchEntry,
  BatchEntrySpec,
  BatchEntryState,
  BatchOptions,
  BatchSlot,
  ImportBatch,
} from '#domain/import-batches';
import type { ImportBatchRef, ImportChoices, UseLfs, Vcs } from '#domain/imports';
import {
  conditionalWrite,
  db,
  getItems,
  now,
  queryAll,
  type TransactItem,
  tableName,
  transactWithRetry,
} from './client.ts';
import { nextIds } from './counters.ts';
import { choiceItem, optionalString, toChoice } from './imports/items.ts';
import {
  BATCH_QUEUE_PARTITION,
  batchEntriesPrefix,
  batchEntryKey,
  batchQueueIndexKey,
  IMPORT_BATCH_PREFIX,
  importBatchKey,
  importKey,
  type Key,
  repoKey,
  repoOwnerIndexKey,
  userPartition,
  userProfileKey,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

// ---- Mapping ------------------------------------------------------------------------------

function toOptions(value: unknown): BatchOptions {
  const item = (value ?? {}) as Record<string, unknown>;
  const choices = (item.choices ?? {}) as Record<string, unknown>;
  const follow = item.follow as Record<string, unknown> | null | undefined;
  return {
    useLfs: (optionalString(item.useLfs) ?? 'undecided') as UseLfs,
    choices: {
      keepEmptyDirectories: choices.keepEmptyDirectories === true,
      keepDeletedRefs: choices.keepDeletedRefs !== false,
    } satisfies ImportChoices,
    private: item.private === true,
    follow: follow
      ? { intervalMinutes: typeof follow.intervalMinutes === 'number' ? follow.intervalMinutes : null }
      : null,
    concurrency: Number(item.concurrency ?? 1),
  };
}

const optionsItem = (options: BatchOptions) => ({
  useLfs: options.useLfs,
  choices: {
    keepEmptyDirectories: options.choices.keepEmptyDirectories,
    keepDeletedRefs: options.choices.keepDeletedRefs,
  },
  private: options.private,
  follow: options.follow ? { intervalMinutes: options.follow.intervalMinutes } : null,
  concurrency: options.concurrency,
});

const toBatch = (item: Record<string, unknown>): ImportBatch => ({
  id: Number(item.batchId),
  ownerLogin: String(item.ownerLogin),
  options: toOptions(item.options),
  hasCredentials: item.hasCredentials === true,
  total: Number(item.total ?? 0),
  queued: Number(item.queued ?? 0),
  running: Number(item.running ?? 0),
  fromImport: optionalString(item.fromImport),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
});

const toEntry = (item: Record<string, unknown>): BatchEntry => ({
  index: Number(item.index),
  repository: String(item.repository),
  vcs: (optionalString(item.vcs) ?? null) as Vcs | null,
  vcsUrl: String(item.vcsUrl),
  tfvcProject: optionalString(item.tfvcProject),
  project: item.project ? toChoice(item.project) : undefined,
  state: String(item.state) as BatchEntryState,
  slot: (optionalString(item.slot) ?? 'none') as BatchSlot,
  importId: Number(item.importId),
  message: optionalString(item.message),
  startedAt: optionalString(item.startedAt),
});

/** Entries whose repository and entry item one transaction writes (two items each, plus the profile: within DynamoDB's 100). */
const BATCH_ENTRIES_PER_TRANSACTION = 45;

// ---- Creation -----------------------------------------------------------------------------

/** A new entry: what it imports, its import id, and its credentials sealed to that id. */
export interface NewBatchEntry extends BatchEntrySpec {
  readonly importId: number;
  readonly sealedCredentials?: string | undefined;
  /** Already started (the import a batch was made from): no repository is created for it. */
  readonly started?: boolean | undefined;
}

export interface NewBatch {
  readonly ownerLogin: string;
  readonly options: BatchOptions;
  readonly hasCredentials: boolean;
  readonly entries: readonly NewBatchEntry[];
  readonly fromImport?: string | undefined;
}

export type CreateBatchOutcome =
  | { readonly kind: 'created'; readonly batch: ImportBatch }
  /** A repository of these entries was made meanwhile by someone else: nothing stays. */
  | { readonly kind: 'taken'; readonly indexes: readonly number[] };

/** Which of `names` the owner already has (one strongly consistent BatchGetItem per 100). */
export async function takenRepositoryNames(owner: string, names: readonly string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (let i = 0; i < names.length; i += 100) {
    const slice = names.slice(i, i + 100);
    const found = await getItems(
      slice.map((name) => repoKey(owner, name)),
      true,
    );
    for (const name of slice) if (found.has(keyString(repoKey(owner, name)))) taken.add(name);
  }
  return taken;
}

const keyString = (key: Key): string => `${key.PK}|${key.SK}`;

/**
 * Creates the batch: its item, every entry, and the repository of every entry not yet started, in
 * transactions of `BATCH_ENTRIES_PER_TRANSACTION` entries (each with the owner's repository count). When a
 * repository was made meanwhile (a name checked free is taken), what the earlier transactions
 * wrote is removed again and the entries whose names are taken are answered: nothing stays.
 */
export async function createBatch(input: NewBatch): Promise<CreateBatchOutcome> {
  const [batchId] = await nextIds('import-batch', 1);
  const id = batchId ?? 0;
  const owner = input.ownerLogin;
  const fresh = input.entries.filter((entry) => !entry.started);
  const repoIds = await nextIds('repository', fresh.length);
  const timestamp = now();
  const queued = fresh.length;
  const running = input.entries.length - fresh.length;
  const batchItem = {
    ...importBatchKey(owner, id),
    ...typed('ImportBatch'),
    ...(queued + running > 0 ? batchQueueIndexKey(owner, id) : {}),
    batchId: id,
    ownerLogin: owner,
    options: optionsItem(input.options),
    hasCredentials: input.hasCredentials,
    total: input.entries.length,
    queued,
    running,
    ...(input.fromImport === undefined ? {} : { fromImport: input.fromImport }),
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const entryItem = (entry: NewBatchEntry) => ({
    ...batchEntryKey(owner, id, entry.index),
    ...typed('ImportBatchEntry'),
    batchId: id,
    index: entry.index,
    repository: entry.repository,
    vcs: entry.vcs,
    vcsUrl: entry.vcsUrl,
    ...(entry.tfvcProject === undefined ? {} : { tfvcProject: entry.tfvcProject }),
    ...(entry.project === undefined ? {} : { project: choiceItem(entry.project) }),
    state: (entry.started ? 'started' : 'queued') satisfies BatchEntryState,
    slot: (entry.started ? 'held' : 'none') satisfies BatchSlot,
    importId: entry.importId,
    ...(entry.sealedCredentials === undefined ? {} : { sealedCredentials: entry.sealedCredentials }),
    ...(entry.started ? { startedAt: timestamp } : {}),
    createdAt: timestamp,
    updatedAt: timestamp,
  });
  const repoItem = (entry: NewBatchEntry, n: number) => ({
    ...repoKey(owner, entry.repository),
    ...repoOwnerIndexKey(owner, entry.repository),
    ...typed('Repository'),
    id: repoIds[n],
    ownerLogin: owner,
    name: entry.repository,
    description: null,
    homepage: null,
    private: input.options.private,
    defaultBranch: 'main',
    createdAt: timestamp,
    updatedAt: timestamp,
    pushedAt: timestamp,
    size: 0,
    hasContent: false,
  });
  const freshIndex = new Map(fresh.map((entry, n) => [entry.index, n]));
  const written: { keys: Key[]; repos: number }[] = [];
  const chunks: NewBatchEntry[][] = [];
  for (let i = 0; i < input.entries.length; i += BATCH_ENTRIES_PER_TRANSACTION)
    chunks.push(input.entries.slice(i, i + BATCH_ENTRIES_PER_TRANSACTION));
  for (const [c, chunk] of chunks.entries()) {
    const items: TransactItem[] = [];
    const keys: Key[] = [];
    const owners: number[] = [];
    if (c === 0) {
      items.push({ Put: { TableName: tableName(), Item: batchItem, ConditionExpression: ITEM_ABSENT } });
      keys.push(importBatchKey(owner, id));
      owners.push(-1);
    }
    let repos = 0;
    for (const entry of chunk) {
      const n = freshIndex.get(entry.index);
      if (n !== undefined) {
        items.push({
          Put: { TableName: tableName(), Item: repoItem(entry, n), ConditionExpression: ITEM_ABSENT },
        });
        keys.push(repoKey(owner, entry.repository));
        owners.push(entry.index);
        repos++;
      }
      items.push({
        Put: { TableName: tableName(), Item: entryItem(entry), ConditionExpression: ITEM_ABSENT },
      });
      keys.push(batchEntryKey(owner, id, entry.index));
      owners.push(-1);
    }
    if (repos > 0) items.push(countRepositories(owner, input.options.private, repos));
    const outcome = await transactWithRetry(items, 'createBatch');
    if (outcome === 'ok') {
      written.push({ keys, repos });
      continue;
    }
    await undoCreation(owner, input.options.private, written);
    const failed = owners[outcome.failedIndex] ?? -1;
    return { kind: 'taken', indexes: failed >= 0 ? [failed] : chunk.map((entry) => entry.index) };
  }
  return { kind: 'created', batch: toBatch(batchItem) };
}

const countRepositories = (owner: string, isPrivate: boolean, count: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: userProfileKey(owner),
    UpdateExpression: 'ADD #count :n',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#count': isPrivate ? 'privateRepos' : 'publicRepos' },
    ExpressionAttributeValues: { ':n': count },
  },
});

/** Removes what earlier transactions of a creation wrote (their repositories are still empty). */
async function undoCreation(
  owner: string,
  isPrivate: boolean,
  written: readonly { keys: Key[]; repos: number }[],
): Promise<void> {
  for (const chunk of written) {
    await transactWithRetry(
      [
        ...chunk.keys.map((key) => ({ Delete: { TableName: tableName(), Key: key } })),
        ...(chunk.repos > 0 ? [countRepositories(owner, isPrivate, -chunk.repos)] : []),
      ],
      'undoBatchCreation',
    );
  }
}

// ---- Reads --------------------------------------------------------------------------------

export async function getBatch(owner: string, id: number): Promise<ImportBatch | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: importBatchKey(owner, id), ConsistentRead: true }),
  );
  return Item ? toBatch(Item) : undefined;
}

/** The batch's entries in request order (strongly consistent). */
export async function listEntries(owner: string, id: number): Promise<BatchEntry[]> {
  const { items } = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': userPartition(owner), ':prefix': batchEntriesPrefix(id) },
    ConsistentRead: true,
  });
  return items.map(toEntry);
}

/** An entry with its sealed credentials (the starter copies them into the import). */
async function entryItem(
  owner: string,
  id: number,
  index: number,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: batchEntryKey(owner, id, index), ConsistentRead: true }),
  );
  return Item;
}

/** The user's batches, newest first. */
export async function listBatches(owner: string): Promise<ImportBatch[]> {
  const { items } = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': userPartition(owner), ':prefix': IMPORT_BATCH_PREFIX },
    ScanIndexForward: false,
    ConsistentRead: true,
  });
  return items.map(toBatch);
}

/** Batches whose queue still moves (GSI1, the scheduler's safety net). */
export async function batchesInMotion(): Promise<{ owner: string; id: number }[]> {
  const { items } = await queryAll({
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ExpressionAttributeValues: { ':pk': BATCH_QUEUE_PARTITION },
    ProjectionExpression: 'ownerLogin, batchId',
  });
  return items.map((item) => ({ owner: String(item.ownerLogin), id: Number(item.batchId) }));
}

// ---- Queue writes -------------------------------------------------------------------------

export interface TakenTurn {
  readonly entry: BatchEntry;
  readonly sealedCredentials?: string | undefined;
}

/**
 * The entry takes a running slot: `queued` → `started` with its slot `held`, in one transaction
 * with `running + 1` on condition `running < concurrency`. `full` when every slot is taken,
 * `not-queued` when the entry has moved on (another starter took it, or the batch was cancelled).
 */
export async function takeTurn(
  owner: string,
  id: number,
  index: number,
  concurrency: number,
): Promise<TakenTurn | 'full' | 'not-queued'> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importBatchKey(owner, id),
          UpdateExpression: 'SET running = running + :one, queued = queued - :one, updatedAt = :now',
          ConditionExpression: 'running < :max',
          ExpressionAttributeValues: { ':one': 1, ':max': concurrency, ':now': timestamp },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: batchEntryKey(owner, id, index),
          UpdateExpression: 'SET #state = :started, slot = :held, startedAt = :now, updatedAt = :now',
          ConditionExpression: '#state = :queued',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':started': 'started',
            ':held': 'held',
            ':queued': 'queued',
            ':now': timestamp,
          },
        },
      },
    ],
    'takeTurn',
  );
  if (outcome !== 'ok') return outcome.failedIndex === 0 ? 'full' : 'not-queued';
  const item = await entryItem(owner, id, index);
  if (!item) return 'not-queued';
  return { entry: toEntry(item), sealedCredentials: optionalString(item.sealedCredentials) };
}

/**
 * The entry gives its slot back (once: `held` → `released`, `running - 1`); with `notStarted`,
 * its import could not be made and the entry says why. False when it held none.
 */
export async function releaseSlot(
  owner: string,
  id: number,
  index: number,
  notStarted?: string,
): Promise<boolean> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importBatchKey(owner, id),
          UpdateExpression: 'SET running = running - :one, updatedAt = :now',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeValues: { ':one': 1, ':now': timestamp },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: batchEntryKey(owner, id, index),
          UpdateExpression: `SET slot = :released, updatedAt = :now${notStarted === undefined ? '' : ', #state = :failed, message = :message'}`,
          ConditionExpression: 'slot = :held',
          ...(notStarted === undefined ? {} : { ExpressionAttributeNames: { '#state': 'state' } }),
          ExpressionAttributeValues: {
            ':released': 'released',
            ':held': 'held',
            ':now': timestamp,
            ...(notStarted === undefined ? {} : { ':failed': 'not_started', ':message': notStarted }),
          },
        },
      },
    ],
    'releaseSlot',
  );
  if (outcome !== 'ok') return false;
  await leaveQueueIndexWhenIdle(owner, id);
  return true;
}

/**
 * An entry whose import could not start for a passing reason (the workflow did not answer) goes
 * back to the queue: `started` → `queued`, its slot given back (`running - 1`, `queued + 1`).
 */
export async function returnTurn(owner: string, id: number, index: number): Promise<boolean> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importBatchKey(owner, id),
          UpdateExpression: 'SET running = running - :one, queued = queued + :one, updatedAt = :now',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeValues: { ':one': 1, ':now': timestamp },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: batchEntryKey(owner, id, index),
          UpdateExpression: 'SET #state = :queued, slot = :none, updatedAt = :now REMOVE startedAt',
          ConditionExpression: 'slot = :held',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':none': 'none',
            ':held': 'held',
            ':now': timestamp,
          },
        },
      },
    ],
    'returnTurn',
  );
  return outcome === 'ok';
}

/**
 * A started entry whose import is being cancelled: `cancelled`, its slot still held (released by
 * whoever cancels, or by the scheduler). Written before the import goes, so that a held slot without
 * an import means a cancel when this is set, and a starter that died before making the import when
 * it is not.
 */
export async function markEntryCancelled(owner: string, id: number, index: number): Promise<void> {
  await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: batchEntryKey(owner, id, index),
        UpdateExpression: 'SET #state = :cancelled, updatedAt = :now',
        ConditionExpression: '#state = :started',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':started': 'started', ':now': now() },
      }),
    ),
  );
}

/** A queued entry that will never start (the batch was cancelled): `cancelled`, `queued - 1`. */
export async function cancelQueuedEntry(owner: string, id: number, index: number): Promise<boolean> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importBatchKey(owner, id),
          UpdateExpression: 'SET queued = queued - :one, updatedAt = :now',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeValues: { ':one': 1, ':now': timestamp },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: batchEntryKey(owner, id, index),
          UpdateExpression: 'SET #state = :cancelled, updatedAt = :now',
          ConditionExpression: '#state = :queued',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':cancelled': 'cancelled', ':queued': 'queued', ':now': timestamp },
        },
      },
    ],
    'cancelQueuedEntry',
  );
  if (outcome !== 'ok') return false;
  await leaveQueueIndexWhenIdle(owner, id);
  return true;
}

/** The batch leaves the scheduler's index once nothing is queued or running. */
async function leaveQueueIndexWhenIdle(owner: string, id: number): Promise<void> {
  await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importBatchKey(owner, id),
        UpdateExpression: 'REMOVE GSI1PK, GSI1SK',
        ConditionExpression: 'queued <= :zero AND running <= :zero AND attribute_exists(GSI1PK)',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    ),
  );
}

/** Imports of the batch follow their origins once complete (null: they do not). */
export async function setBatchFollow(
  owner: string,
  id: number,
  follow: { readonly intervalMinutes: number | null } | null,
): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: importBatchKey(owner, id),
      UpdateExpression: 'SET #options.follow = :follow, updatedAt = :now',
      ConditionExpression: ITEM_EXISTS,
      ExpressionAttributeNames: { '#options': 'options' },
      ExpressionAttributeValues: { ':follow': follow, ':now': now() },
    }),
  );
}

/** The import a batch was made from joins it (conditional on the import read). */
export async function joinBatch(
  owner: string,
  repo: string,
  importId: number,
  batch: ImportBatchRef,
): Promise<boolean> {
  const done = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importKey(owner, repo),
        UpdateExpression: 'SET batchId = :id, batchEntry = :entry',
        ConditionExpression: 'importId = :importId',
        ExpressionAttributeValues: { ':id': batch.id, ':entry': batch.entry, ':importId': importId },
      }),
    ),
  );
  return done !== false;
}
