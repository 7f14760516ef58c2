/**
 * The import aggregate's items and their domain objects (spec §2.4–2.7): one mapping shared by the
 * API side (`requests.ts`) and the worker side (`progress.ts`), and the reads both make.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Finding, FindingEntry, FindingKind, StoredReport } from '#domain/import-report';
import type {
  FailedStep,
  Import,
  ImportAuthor,
  ImportChoices,
  ImportStatus,
  LargeFile,
  ProjectChoice,
  StatusChangeRecord,
  UseLfs,
  Vcs,
  WaitingFor,
} from '#domain/imports';
import { db, queryAll, tableName } from '../client.ts';
import {
  importAuthorKey,
  importItemsPrefix,
  importKey,
  importLargeFilesKey,
  importReportKey,
  repoPartition,
} from '../keys.ts';

// ---- Mapping items ------------------------------------------------------------------------

export const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const nullableNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

export function toChoice(value: unknown): ProjectChoice {
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
export const choiceItem = (choice: ProjectChoice): Record<string, string> => ({
  vcs: choice.vcs,
  humanName: choice.humanName,
  ...(choice.tfvcProject === undefined ? {} : { tfvcProject: choice.tfvcProject }),
  ...(choice.path === undefined ? {} : { path: choice.path }),
});

/** Stored form of the owner's choices: explicit fields, never a client's object. */
export const choicesItem = (choices: ImportChoices): Record<string, boolean> => ({
  keepEmptyDirectories: choices.keepEmptyDirectories,
  keepDeletedRefs: choices.keepDeletedRefs,
});

/** The stored choices; undefined (the defaults) for an import stored before there were any. */
function toChoices(value: unknown): ImportChoices | undefined {
  const item = value as Record<string, unknown> | undefined;
  if (typeof item?.keepEmptyDirectories !== 'boolean' || typeof item.keepDeletedRefs !== 'boolean')
    return undefined;
  return { keepEmptyDirectories: item.keepEmptyDirectories, keepDeletedRefs: item.keepDeletedRefs };
}

const toStatusChange = (value: unknown): StatusChangeRecord | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const change = value as Record<string, unknown>;
  return {
    attempt: Number(change.attempt),
    from: (optionalString(change.from) ?? null) as ImportStatus | null,
    to: String(change.to) as ImportStatus,
  };
};

export function toImport(item: Record<string, unknown>): Import {
  const optional = {
    tfvcProject: optionalString(item.tfvcProject),
    chosenProject: item.chosenProject ? toChoice(item.chosenProject) : undefined,
    batch:
      typeof item.batchId === 'number'
        ? { id: item.batchId, entry: Number(item.batchEntry ?? 0) }
        : undefined,
    choices: toChoices(item.choices),
    failedStep: optionalString(item.failedStep) as FailedStep | undefined,
    errorMessage: optionalString(item.errorMessage),
    projectChoices: Array.isArray(item.projectChoices) ? item.projectChoices.map(toChoice) : undefined,
    waitingFor: optionalString(item.waitingFor) as WaitingFor | undefined,
    taskToken: optionalString(item.taskToken),
    executionArn: optionalString(item.executionArn),
    statusSequence: typeof item.statusSequence === 'number' ? item.statusSequence : undefined,
    lastStatusChange: toStatusChange(item.lastStatusChange),
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

export const toAuthor = (item: Record<string, unknown>): ImportAuthor => ({
  id: Number(item.id),
  remoteId: String(item.remoteId),
  remoteName: String(item.remoteName),
  email: String(item.email),
  name: String(item.name),
});

/**
 * Listed entries of one item (large files, the report's findings) stop at this many bytes:
 * DynamoDB items end at 400 KB. Counts still count every one.
 */
export const MAX_LISTED_BYTES = 300 * 1024;

// ---- Reads --------------------------------------------------------------------------------

export async function importItem(owner: string, repo: string): Promise<Record<string, unknown> | undefined> {
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

/** One author of the import, or undefined. */
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
 * `count` of the import's authors with an id above `since`, from the `start`-th (0-based), and how
 * many there are. A keys-only Query counts them and finds the page's first key; a second Query
 * with a Limit reads the page's items alone. Strongly consistent, as `listAuthors`.
 */
export async function pageOfAuthors(
  owner: string,
  repo: string,
  importId: number,
  since: number | undefined,
  start: number,
  count: number,
): Promise<{ authors: ImportAuthor[]; total: number }> {
  const prefix = `${importItemsPrefix(importId)}AUTHOR#`;
  const from = importAuthorKey(owner, repo, importId, (since ?? 0) + 1).SK;
  const range = (first: string) => ({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': repoPartition(owner, repo), ':from': first, ':to': `${prefix}~` },
    ConsistentRead: true,
  });
  const { items: keys } = await queryAll({ ...range(from), ProjectionExpression: 'SK' });
  const first = keys[start]?.SK;
  if (typeof first !== 'string' || count < 1) return { authors: [], total: keys.length };
  const { items } = await queryAll(range(first), count);
  return { authors: items.map(toAuthor), total: keys.length };
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
