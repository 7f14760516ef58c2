/**
 * Reads the batch dashboard makes over many imports at once (issue 37, item 5): each import and
 * its sync item, its finding counts (from its report item) and its revision map's size (from the map's header), by
 * BatchGetItem of 100 keys a call, the calls sent side by side, with projections so that a
 * report's listed findings (up to 1,000 entries a kind) are never read. 200 imports: eight calls
 * in all, sent together: one round trip's time.
 */
import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { FindingKind } from '#domain/import-report';
import type { ImportSync } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import { db, tableName } from '../client.ts';
import { importKey, importReportKey, importRevisionMapKey, importSyncKey, type Key } from '../keys.ts';
import { untilProcessed } from '../unprocessed.ts';
import { toImport } from './items.ts';
import { toSync } from './sync.ts';

/** An import of a batch, by what its keys need. */
export interface ImportRef {
  readonly owner: string;
  readonly repo: string;
  readonly importId: number;
}

const KEYS_PER_CALL = 100;

async function projected(
  keys: readonly Key[],
  projection?: string,
  names?: Record<string, string>,
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
    const batch: Record<string, unknown>[] = keys
      .slice(i, i + KEYS_PER_CALL)
      .map((key) => ({ PK: key.PK, SK: key.SK }));
    calls.push(
      untilProcessed('BatchGetItem', batch, async (pending) => {
        const result: BatchGetCommandOutput = await db().send(
          new BatchGetCommand({
            RequestItems: {
              [tableName()]: {
                Keys: [...pending],
                ConsistentRead: true,
                ...(projection
                  ? { ProjectionExpression: `PK, SK, ${projection}`, ExpressionAttributeNames: names }
                  : {}),
              },
            },
          }),
        );
        for (const item of result.Responses?.[tableName()] ?? []) found.set(`${item.PK}|${item.SK}`, item);
        return result.UnprocessedKeys?.[tableName()]?.Keys;
      }),
    );
  }
  await Promise.all(calls);
  return found;
}

const at = (items: Map<string, Record<string, unknown>>, key: Key) => items.get(`${key.PK}|${key.SK}`);

/**
 * Each import's counts of the `kinds` asked for (kinds with none omitted); an import without a
 * report: empty. The caller names the kinds (the domain's list), so that only they are read.
 */
export async function findingCountsOf(
  imports: readonly ImportRef[],
  kinds: readonly FindingKind[],
): Promise<Map<number, Partial<Record<FindingKind, number>>>> {
  const keys = imports.map((ref) => importReportKey(ref.owner, ref.repo, ref.importId));
  const names: Record<string, string> = { '#f': 'findings', '#c': 'count' };
  kinds.forEach((kind, n) => {
    names[`#k${n}`] = kind;
  });
  const projection = kinds.map((_, n) => `#f.#k${n}.#c`).join(', ');
  const items = await projected(keys, projection, names);
  const counts = new Map<number, Partial<Record<FindingKind, number>>>();
  imports.forEach((ref, n) => {
    const item = at(items, keys[n] as Key);
    const findings = (item?.findings ?? {}) as Record<string, { count?: unknown }>;
    const found: Partial<Record<FindingKind, number>> = {};
    for (const kind of kinds) {
      const count = Number(findings[kind]?.count ?? 0);
      if (count > 0) found[kind] = count;
    }
    counts.set(ref.importId, found);
  });
  return counts;
}

/** Each import's revision-map size (0 without a map), by import id. */
export async function revisionTotalsOf(imports: readonly ImportRef[]): Promise<Map<number, number>> {
  const keys = imports.map((ref) => importRevisionMapKey(ref.owner, ref.repo, ref.importId));
  const items = await projected(keys, '#t', { '#t': 'total' });
  return new Map(imports.map((ref, n) => [ref.importId, Number(at(items, keys[n] as Key)?.total ?? 0)]));
}

/**
 * Each import and its sync item, by import id: an import whose item names another id (the
 * repository was imported again since) is left out, as is the sync of an import never followed.
 */
export async function importsAndSyncsOf(
  imports: readonly ImportRef[],
): Promise<Map<number, { readonly record: Import; readonly sync: ImportSync | undefined }>> {
  const keys = imports.flatMap((ref) => [
    importKey(ref.owner, ref.repo),
    importSyncKey(ref.owner, ref.repo, ref.importId),
  ]);
  const items = await projected(keys);
  const found = new Map<number, { record: Import; sync: ImportSync | undefined }>();
  imports.forEach((ref, n) => {
    const item = at(items, keys[2 * n] as Key);
    if (!item || Number(item.importId) !== ref.importId) return;
    const sync = at(items, keys[2 * n + 1] as Key);
    found.set(ref.importId, { record: toImport(item), sync: sync ? toSync(sync) : undefined });
  });
  return found;
}
