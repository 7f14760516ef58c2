/**
 * The revision map's items (entries as in `domain/revision-map.ts`): pages of `REVISION_PAGE`
 * entries in origin order (a page of the API is at most two stored pages) and, for finding one
 * entry, `lookupBuckets(total)` buckets by a hash of the origin revision. The worker writes a
 * whole generation (the attempt that published it) in BatchWriteItem calls of 25, then points the header at it in a
 * transaction conditional on the attempt (a superseded attempt's map never becomes visible), then
 * deletes the previous generation. Readers follow the header, so they see one whole generation.
 * A sync whose map only appends entries extends the visible generation instead (`extendRevisionMap`):
 * its last page, new pages and the header's total change in one transaction, so readers see the
 * old map or the longer one, never a mix. A sync's new entries (the tail, at most `MAX_TAIL`) go
 * into the header itself, not the buckets, and a lookup reads them there first: a sync of a few
 * revisions so writes its pages and the header, not the ten-odd buckets (about 9 KB each, each a
 * write of its whole size) its entries would fall in; the extension that would pass `MAX_TAIL`
 * moves the whole tail into the buckets. New entries may also come before old ones (a Git sync's
 * `--topo-order`): the pages from the first that changes are written again.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RevisionChange, RevisionEntry, StoredRevisionMap } from '#domain/revision-map';
import { batchWrite, db, getItems, itemOf, now, tableName, transact, transactWithRetry } from '../client.ts';
import { importRevisionBucketKey, importRevisionMapKey, importRevisionPageKey, type Key } from '../keys.ts';
import { typed } from '../table.ts';
import { attemptIsCurrent } from './progress.ts';

/** Entries per stored page: the API's largest `per_page`, so one answer reads at most two pages. */
export const REVISION_PAGE = 100;

/** Entries per lookup bucket, on average. */
const BUCKET_ENTRIES = 100;

/**
 * Entries a bucket may hold on average before an extension writes a new generation instead (its
 * bucket count is fixed; ~200 entries keep a bucket near 17 KB).
 */
const BUCKET_CAPACITY = 200;

/** Items one extension may write: a transaction holds 100 actions (the header and the attempt check among them). */
const MAX_EXTENSION_ITEMS = 90;

/** Entries a header may hold in its tail (about 9 KB) before they go into the buckets. */
const MAX_TAIL = 100;

/** How many lookup buckets a map of `total` entries is spread over (fixed when it is written). */
export const lookupBuckets = (total: number): number => Math.max(1, Math.ceil(total / BUCKET_ENTRIES));

/** The stored pages (0-based) that hold entries `start` … `start + count − 1`. */
export function storedPagesFor(start: number, count: number, total: number): number[] {
  const end = Math.min(start + count, total);
  if (end <= start) return [];
  const pages: number[] = [];
  for (let page = Math.floor(start / REVISION_PAGE); page * REVISION_PAGE < end; page++) pages.push(page);
  return pages;
}

/** The bucket of an origin revision: FNV-1a over its UTF-8 bytes, so every writer and reader agrees. */
export function lookupBucket(originRevision: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(originRevision)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % buckets;
}

interface Header {
  readonly generation: number;
  readonly total: number;
  readonly buckets: number;
  /** The tail: origin revision → commit (empty in a header from before it was kept: `tailKept` false). */
  readonly tail: Readonly<Record<string, string>>;
  readonly tailKept: boolean;
}

/** The map's header; its tail only when asked for (a page of the list does not need it). */
async function header(
  owner: string,
  repo: string,
  importId: number,
  withTail = false,
): Promise<Header | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importRevisionMapKey(owner, repo, importId),
      ConsistentRead: true,
      ...(withTail
        ? {}
        : {
            ProjectionExpression: 'generation, #total, buckets',
            ExpressionAttributeNames: { '#total': 'total' },
          }),
    }),
  );
  if (!Item) return undefined;
  return {
    generation: Number(Item.generation),
    total: Number(Item.total),
    buckets: Number(Item.buckets),
    tail: (Item.tail ?? {}) as Record<string, string>,
    tailKept: Item.tail !== undefined,
  };
}

/** What the worker keeps of a header it wrote. */
const storedOf = (map: Header): StoredRevisionMap => ({
  generation: map.generation,
  total: map.total,
  buckets: map.buckets,
  tail: Object.keys(map.tail),
});

/** Pairs as stored: `[origin revision, commit]`, compact (a page of 100 is about 9 KB). */
const toEntries = (value: unknown): RevisionEntry[] =>
  (Array.isArray(value) ? (value as [string, string][]) : []).map(([originRevision, commit]) => ({
    originRevision,
    commit,
  }));

function generationKeys(
  owner: string,
  repo: string,
  importId: number,
  map: Pick<Header, 'generation' | 'total' | 'buckets'>,
): Key[] {
  const keys: Key[] = [];
  for (let page = 0; page * REVISION_PAGE < map.total; page++)
    keys.push(importRevisionPageKey(owner, repo, importId, map.generation, page));
  for (let bucket = 0; bucket < map.buckets; bucket++)
    keys.push(importRevisionBucketKey(owner, repo, importId, map.generation, bucket));
  return keys;
}

/**
 * Stores `entries` (origin order) as the import's map, written by `attempt`. False when the attempt
 * is no longer current (its items are removed again).
 */
export async function storeRevisionMap(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  entries: readonly RevisionEntry[],
): Promise<boolean> {
  const timestamp = now();
  const fresh = {
    generation: attempt,
    total: entries.length,
    buckets: lookupBuckets(entries.length),
    tail: {},
  };
  const item = (key: Key, type: string, body: Record<string, unknown>) => ({
    PutRequest: { Item: { ...key, ...typed(type), ...body, createdAt: timestamp, updatedAt: timestamp } },
  });
  const requests: Record<string, unknown>[] = [];
  for (let page = 0; page * REVISION_PAGE < entries.length; page++) {
    const slice = entries.slice(page * REVISION_PAGE, (page + 1) * REVISION_PAGE);
    requests.push(
      item(importRevisionPageKey(owner, repo, importId, attempt, page), 'ImportRevisionPage', {
        entries: slice.map((entry) => [entry.originRevision, entry.commit]),
      }),
    );
  }
  const buckets: Record<string, string>[] = Array.from({ length: fresh.buckets }, () => ({}));
  for (const entry of entries) {
    const bucket = buckets[lookupBucket(entry.originRevision, fresh.buckets)];
    if (bucket) bucket[entry.originRevision] = entry.commit;
  }
  buckets.forEach((found, bucket) => {
    requests.push(
      item(importRevisionBucketKey(owner, repo, importId, attempt, bucket), 'ImportRevisionBucket', {
        found,
      }),
    );
  });
  const previous = await header(owner, repo, importId);
  await batchWrite(requests);
  const outcome = await transactWithRetry(
    [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...importRevisionMapKey(owner, repo, importId),
            ...typed('ImportRevisionMap'),
            ...fresh,
            createdAt: timestamp,
            updatedAt: timestamp,
          },
        },
      },
      attemptIsCurrent(owner, repo, importId, attempt),
    ],
    'storeRevisionMap',
  );
  // What no header points at any more: the previous generation, or this one when it lost.
  const visible = outcome === 'ok' ? attempt : previous?.generation;
  const stale = outcome === 'ok' ? previous : fresh;
  if (stale && stale.generation !== visible)
    await batchWrite(
      generationKeys(owner, repo, importId, stale).map((key) => ({ DeleteRequest: { Key: key } })),
    );
  return outcome === 'ok';
}

/** New entries one extension may add to a bucket: a bigger change (about doubling the map) writes a new generation. */
const MAX_BUCKET_ADDITIONS = 100;

/**
 * Extends the visible generation when `entries` are the map `stored` (written or extended by this
 * worker: its generation, total, buckets and tail) with the entries `change` names added, and the
 * header still says so: the pages from the one holding `change.firstChange` are written again, the
 * added entries go into the header's tail, or, when the tail would pass `MAX_TAIL`, the whole tail
 * and the added entries are set in their buckets (an update of each bucket's map, nothing read)
 * and the tail emptied; all in one transaction with the header's new total, conditional on the
 * header's generation, total, buckets and tail size and on the attempt. Without the buckets or
 * the tail in `stored` (a record from before they were kept) the header is read first. The map as
 * now stored, or `superseded` (the attempt is no longer current; nothing written), or
 * `not-extended` (the header moved on, the buckets would pass their capacity or the change is too
 * big for one transaction: the caller writes a new generation).
 */
export async function extendRevisionMap(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
  entries: readonly RevisionEntry[],
  stored: StoredRevisionMap,
  change: RevisionChange,
): Promise<StoredRevisionMap | 'superseded' | 'not-extended'> {
  const map: Header | undefined =
    stored.buckets === undefined || stored.tail === undefined
      ? await header(owner, repo, importId, true)
      : {
          generation: stored.generation,
          total: stored.total,
          buckets: stored.buckets,
          // Only the tail's names are kept: its commits are those the entries give them.
          tail: Object.fromEntries(stored.tail.map((revision) => [revision, ''])),
          tailKept: true,
        };
  if (
    !map ||
    map.generation !== stored.generation ||
    map.total !== stored.total ||
    entries.length !== map.total + change.added.length ||
    entries.length > map.buckets * BUCKET_CAPACITY
  )
    return 'not-extended';
  if (change.added.length === 0 && change.firstChange === map.total) return storedOf(map);
  const tailBefore = Object.keys(map.tail);
  const folding = tailBefore.length + change.added.length > MAX_TAIL;
  const commits = new Map(entries.map((entry) => [entry.originRevision, entry.commit]));
  const byBucket = new Map<number, RevisionEntry[]>();
  if (folding)
    for (const entry of [
      ...tailBefore.map((originRevision) => ({ originRevision, commit: commits.get(originRevision) ?? '' })),
      ...change.added,
    ]) {
      const bucket = lookupBucket(entry.originRevision, map.buckets);
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), entry]);
    }
  const firstPage = Math.floor(change.firstChange / REVISION_PAGE);
  const lastPage = Math.ceil(entries.length / REVISION_PAGE) - 1;
  if (lastPage - firstPage + 1 + byBucket.size > MAX_EXTENSION_ITEMS) return 'not-extended';
  if ([...byBucket.values()].some((added) => added.length > MAX_BUCKET_ADDITIONS)) return 'not-extended';

  const timestamp = now();
  const items = [];
  for (let page = firstPage; page <= lastPage; page++) {
    const slice = entries.slice(page * REVISION_PAGE, (page + 1) * REVISION_PAGE);
    items.push({
      Put: {
        TableName: tableName(),
        Item: {
          ...importRevisionPageKey(owner, repo, importId, map.generation, page),
          ...typed('ImportRevisionPage'),
          entries: slice.map((entry) => [entry.originRevision, entry.commit]),
          createdAt: timestamp,
          updatedAt: timestamp,
        },
      },
    });
  }
  for (const [bucket, added] of byBucket) {
    const names: Record<string, string> = { '#found': 'found' };
    const values: Record<string, unknown> = { ':now': timestamp };
    const assignments = added.map((entry, n) => {
      names[`#r${n}`] = entry.originRevision;
      values[`:c${n}`] = entry.commit;
      return `#found.#r${n} = :c${n}`;
    });
    items.push({
      Update: {
        TableName: tableName(),
        Key: importRevisionBucketKey(owner, repo, importId, map.generation, bucket),
        UpdateExpression: `SET ${assignments.join(', ')}, updatedAt = :now`,
        ConditionExpression: 'attribute_exists(#found)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    });
  }
  // The tail: emptied by a fold; otherwise each added entry set in it (the whole map for a header
  // that has none yet).
  const names: Record<string, string> = { '#total': 'total', '#tail': 'tail' };
  const values: Record<string, unknown> = {
    ':total': entries.length,
    ':before': map.total,
    ':generation': map.generation,
    ':buckets': map.buckets,
    ':now': timestamp,
  };
  const set = ['#total = :total', 'updatedAt = :now'];
  if (folding || !map.tailKept) {
    values[':tail'] = folding
      ? {}
      : Object.fromEntries(change.added.map((entry) => [entry.originRevision, entry.commit]));
    set.push('#tail = :tail');
  } else
    change.added.forEach((entry, n) => {
      names[`#t${n}`] = entry.originRevision;
      values[`:t${n}`] = entry.commit;
      set.push(`#tail.#t${n} = :t${n}`);
    });
  let tailHolds = 'attribute_not_exists(#tail)';
  if (map.tailKept) {
    values[':tailSize'] = tailBefore.length;
    tailHolds = 'size(#tail) = :tailSize';
  }
  const outcome = await transact([
    ...items,
    {
      Update: {
        TableName: tableName(),
        Key: importRevisionMapKey(owner, repo, importId),
        UpdateExpression: `SET ${set.join(', ')}`,
        ConditionExpression: `generation = :generation AND #total = :before AND buckets = :buckets AND ${tailHolds}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    attemptIsCurrent(owner, repo, importId, attempt),
  ]);
  if (outcome === 'ok')
    return {
      generation: map.generation,
      total: entries.length,
      buckets: map.buckets,
      tail: folding ? [] : [...tailBefore, ...change.added.map((entry) => entry.originRevision)],
    };
  if (outcome !== 'conflict' && outcome.failed.includes(items.length + 1)) return 'superseded';
  return 'not-extended';
}

/** Entries `start` … `start + count − 1` of the map in origin order, and how many it has. */
export async function pageOfRevisions(
  owner: string,
  repo: string,
  importId: number,
  start: number,
  count: number,
): Promise<{ entries: RevisionEntry[]; total: number }> {
  const map = await header(owner, repo, importId);
  if (!map) return { entries: [], total: 0 };
  const pages = storedPagesFor(start, count, map.total);
  if (pages.length === 0) return { entries: [], total: map.total };
  const keys = pages.map((page) => importRevisionPageKey(owner, repo, importId, map.generation, page));
  const items = await getItems(keys, true);
  const entries = keys.flatMap((key) => toEntries(itemOf(items, key)?.entries));
  const offset = start - (pages[0] ?? 0) * REVISION_PAGE;
  const end = Math.min(offset + count, map.total - (pages[0] ?? 0) * REVISION_PAGE);
  return { entries: entries.slice(offset, end), total: map.total };
}

/** The commit an origin revision was published as; undefined when the map has no such revision. */
export async function findRevision(
  owner: string,
  repo: string,
  importId: number,
  originRevision: string,
): Promise<string | undefined> {
  const map = await header(owner, repo, importId, true);
  if (!map) return undefined;
  if (Object.hasOwn(map.tail, originRevision)) return map.tail[originRevision];
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importRevisionBucketKey(
        owner,
        repo,
        importId,
        map.generation,
        lookupBucket(originRevision, map.buckets),
      ),
      ConsistentRead: true,
    }),
  );
  const found = (Item?.found ?? {}) as Record<string, unknown>;
  const commit = Object.hasOwn(found, originRevision) ? found[originRevision] : undefined;
  return typeof commit === 'string' ? commit : undefined;
}

/** The map's last origin revision (the newest published, in origin order); undefined when empty. */
export async function lastRevision(
  owner: string,
  repo: string,
  importId: number,
): Promise<string | undefined> {
  const { total } = await pageOfRevisions(owner, repo, importId, 0, 0);
  if (total === 0) return undefined;
  return (await pageOfRevisions(owner, repo, importId, total - 1, 1)).entries[0]?.originRevision;
}
