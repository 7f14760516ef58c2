/**
 * Many author mappings at once (an authors file, issue 37). The authors are written in
 * transactions of up to 99, each with the import's guard (same import, attempt and status as
 * read, owner not pushed; it counts the change: `importGuard`), so no write lands on an import
 * that moved on. The last
 * transaction carries the import's own change when the history is to be rewritten (the next
 * attempt in `mapping`, as `mapAuthor` does for one author): the whole file costs one rewrite.
 * A transaction refused half-way leaves the earlier ones written; they hold what the file asked
 * for, so sending the file again (the service does, from a fresh read) completes it.
 */
import type { Import } from '#domain/imports';
import { now, type TransactItem, tableName, transactWithRetry } from '../client.ts';
import { importAuthorKey } from '../keys.ts';
import { ITEM_EXISTS } from '../table.ts';
import { importGuard, type MapOutcome } from './requests.ts';

export interface AuthorMapping {
  readonly authorId: number;
  readonly name: string;
  readonly email: string;
}

/** DynamoDB's 100 actions per transaction, less the import's guard. */
export const AUTHORS_PER_TRANSACTION = 99;

const authorAction = (
  owner: string,
  repo: string,
  importId: number,
  mapping: AuthorMapping,
): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: importAuthorKey(owner, repo, importId, mapping.authorId),
    UpdateExpression: 'SET #name = :name, email = :email, updatedAt = :now',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: { ':name': mapping.name, ':email': mapping.email, ':now': now() },
  },
});

async function writeChunk(
  owner: string,
  repo: string,
  read: Pick<Import, 'importId' | 'attempt' | 'status'>,
  chunk: readonly AuthorMapping[],
  republish: boolean,
): Promise<MapOutcome> {
  const outcome = await transactWithRetry(
    [
      ...chunk.map((mapping) => authorAction(owner, repo, read.importId, mapping)),
      importGuard(owner, repo, read, republish),
    ],
    'mapAuthors',
  );
  if (outcome === 'ok') return 'ok';
  return outcome.failedIndex < chunk.length ? 'no-author' : 'import-changed';
}

/**
 * Writes `mappings` (each author's whole identity) on condition of the import as read; with
 * `republish`, the import begins its next attempt in `mapping` with the last chunk (also when there
 * is nothing left to write: a retry after a refused chunk still republishes once).
 */
export async function mapAuthors(
  owner: string,
  repo: string,
  read: Pick<Import, 'importId' | 'attempt' | 'status'>,
  mappings: readonly AuthorMapping[],
  republish: boolean,
): Promise<MapOutcome> {
  const chunks: AuthorMapping[][] = [];
  for (let i = 0; i < mappings.length; i += AUTHORS_PER_TRANSACTION)
    chunks.push(mappings.slice(i, i + AUTHORS_PER_TRANSACTION));
  const last = chunks.pop() ?? [];
  // One after the other: each transaction updates the import item (its guard), so parallel ones
  // would only cancel each other.
  for (const chunk of chunks) {
    const outcome = await writeChunk(owner, repo, read, chunk, false);
    if (outcome !== 'ok') return outcome;
  }
  if (last.length === 0 && !republish) return 'ok';
  return writeChunk(owner, repo, read, last, republish);
}
