import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { importRevisionBucketKey } from '#data/keys';
import { type RevisionEntry, revisionChange, type StoredRevisionMap } from '#domain/revision-map';
import { freshTable } from '#test/dynamodb';

/*
 * The revision map's items against DynamoDB Local: pages in origin order across stored pages, one
 * entry by origin revision, a new generation replacing the old whole, a sync's entries appended to
 * the visible generation, and a superseded attempt's map never showing. Sized as the Lua history (5,907 commits) to measure the write.
 */

let map: typeof import('#data/imports/revision-map');
let client: typeof import('#data/client');
let seed: typeof import('#test/import-seed');
let requests: typeof import('#data/imports/requests');
let repositories: typeof import('#data/repositories');

async function newImport(repo: string) {
  await repositories.createRepository({ ownerLogin: 'octocat', name: repo });
  return seed.seedImport('octocat', repo, {});
}

/** What `to` adds to `from` (the test's lists always only add). */
function changeOf(from: readonly RevisionEntry[], to: readonly RevisionEntry[]) {
  const change = revisionChange(from, to);
  if (!change) throw new Error('not an extension');
  return change;
}

const sha = (text: string) => createHash('sha1').update(text).digest('hex');
const entries = (n: number, salt: string): RevisionEntry[] =>
  Array.from({ length: n }, (_, i) => ({ originRevision: String(i + 1), commit: sha(`${salt}${i}`) }));

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  map = await import('#data/imports/revision-map');
  client = await import('#data/client');
  seed = await import('#test/import-seed');
  requests = await import('#data/imports/requests');
  repositories = await import('#data/repositories');
  await (await import('#data/users')).createUser({ login: 'octocat', passwordHash: 'h' });
});

describe('the revision map data', () => {
  it('stores 5,907 entries in batches, then reads any page and any single entry', async () => {
    const { importId, attempt } = await newImport('lua');
    const all = entries(5907, 'a');

    const started = performance.now();
    expect(await map.storeRevisionMap('octocat', 'lua', importId, attempt, all)).toBe(true);
    console.log(`stored 5,907 entries in ${Math.round(performance.now() - started)} ms`);

    expect(await map.pageOfRevisions('octocat', 'lua', importId, 0, 30)).toEqual({
      entries: all.slice(0, 30),
      total: 5907,
    });
    expect((await map.pageOfRevisions('octocat', 'lua', importId, 5850, 100)).entries).toEqual(
      all.slice(5850),
    );
    expect((await map.pageOfRevisions('octocat', 'lua', importId, 190, 20)).entries).toEqual(
      all.slice(190, 210),
    );
    expect((await map.pageOfRevisions('octocat', 'lua', importId, 6000, 30)).entries).toEqual([]);
    for (const entry of [all[0], all[4321], all[5906]])
      expect(await map.findRevision('octocat', 'lua', importId, entry?.originRevision ?? '')).toBe(
        entry?.commit,
      );
    expect(await map.findRevision('octocat', 'lua', importId, '5908')).toBeUndefined();
  });

  it('sends the batches of a large map side by side, not one round trip after another', async () => {
    const { importId, attempt } = await newImport('side-by-side');
    let inFlight = 0;
    let most = 0;
    let batches = 0;
    const name = 'countBatchWritesInFlight';
    client.db().middlewareStack.add(
      (next, context) => async (args) => {
        if (!String(context.commandName).startsWith('BatchWrite')) return next(args);
        batches += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: 'initialize', name },
    );
    try {
      expect(
        await map.storeRevisionMap('octocat', 'side-by-side', importId, attempt, entries(3699, 's')),
      ).toBe(true);
    } finally {
      client.db().middlewareStack.remove(name);
    }
    expect(batches).toBeGreaterThan(1);
    expect(most).toBeGreaterThan(1);
  });

  it('replaces the map whole with the next attempt’s, and ignores a superseded attempt’s', async () => {
    const { importId, attempt } = await newImport('rewritten');
    await map.storeRevisionMap('octocat', 'rewritten', importId, attempt, entries(250, 'first'));
    // A republish (an author mapped after complete) is the next attempt.
    expect(
      await requests.beginAttempt('octocat', 'rewritten', { attempt, status: 'importing' }, 'mapping'),
    ).toMatchObject({ attempt: attempt + 1, status: 'mapping' });
    const second = entries(120, 'second');
    expect(await map.storeRevisionMap('octocat', 'rewritten', importId, attempt + 1, second)).toBe(true);
    expect(await map.storeRevisionMap('octocat', 'rewritten', importId, attempt, entries(300, 'late'))).toBe(
      false,
    );

    const page = await map.pageOfRevisions('octocat', 'rewritten', importId, 100, 100);
    expect(page).toEqual({ entries: second.slice(100), total: 120 });
    expect(await map.findRevision('octocat', 'rewritten', importId, '200')).toBeUndefined();
    expect(await map.findRevision('octocat', 'rewritten', importId, '7')).toBe(second[6]?.commit);
  });

  it('extends the visible generation with a sync’s new entries, and refuses a stale or superseded extension', async () => {
    const { importId, attempt } = await newImport('followed');
    const first = entries(250, 'f');
    await map.storeRevisionMap('octocat', 'followed', importId, attempt, first);
    expect(
      await requests.beginAttempt('octocat', 'followed', { attempt, status: 'importing' }, 'importing'),
    ).toMatchObject({ attempt: attempt + 1, status: 'importing' });
    const synced = [...first, ...entries(380, 'new').slice(250)];
    const extend = (
      by: number,
      list: readonly RevisionEntry[],
      stored: StoredRevisionMap,
      change: ReturnType<typeof changeOf>,
    ) => map.extendRevisionMap('octocat', 'followed', importId, by, list, stored, change);

    // The header known (as the worker keeps it): nothing is read before the transaction. 130 new
    // entries are more than a tail holds: they go into the buckets.
    const header = { generation: attempt, total: 250, buckets: map.lookupBuckets(250), tail: [] };
    expect(await extend(attempt + 1, synced, header, changeOf(first, synced))).toEqual({
      ...header,
      total: 380,
    });
    expect(await map.pageOfRevisions('octocat', 'followed', importId, 200, 100)).toEqual({
      entries: synced.slice(200, 300),
      total: 380,
    });
    expect((await map.pageOfRevisions('octocat', 'followed', importId, 300, 100)).entries).toEqual(
      synced.slice(300),
    );
    for (const entry of [synced[0], synced[249], synced[250], synced[379]])
      expect(await map.findRevision('octocat', 'followed', importId, entry?.originRevision ?? '')).toBe(
        entry?.commit,
      );

    // What the caller last stored is no longer what the header says: a new generation is needed,
    // whether the header is read (no buckets kept) or only checked by the transaction.
    const more = [...synced, ...entries(390, 'm').slice(380)];
    const stale = changeOf(first, more);
    expect(await extend(attempt + 1, more, { generation: attempt, total: 250 }, stale)).toBe('not-extended');
    expect(await extend(attempt + 1, more, header, stale)).toBe('not-extended');
    // An attempt no longer current writes nothing.
    expect(await extend(attempt, more, { generation: attempt, total: 380 }, changeOf(synced, more))).toBe(
      'superseded',
    );
    expect((await map.pageOfRevisions('octocat', 'followed', importId, 300, 100)).entries).toEqual(
      synced.slice(300),
    );
    expect(await map.findRevision('octocat', 'followed', importId, '385')).toBeUndefined();
  });

  it('keeps a sync’s few new entries in the header, not the buckets, until they pass MAX_TAIL; new entries before old ones rewrite the pages from there', async () => {
    const { importId, attempt } = await newImport('tail');
    const base = entries(5907, 't');
    await map.storeRevisionMap('octocat', 'tail', importId, attempt, base);
    const buckets = map.lookupBuckets(5907);
    const bucketKeys = Array.from({ length: buckets }, (_, bucket) =>
      importRevisionBucketKey('octocat', 'tail', importId, attempt, bucket),
    );
    const bucketItems = async () => {
      const items = await client.getItems(bucketKeys, true);
      return bucketKeys.map((key) => JSON.stringify(client.itemOf(items, key)?.found));
    };
    const before = await bucketItems();
    const newEntry = (n: number): RevisionEntry => ({ originRevision: `new-${n}`, commit: sha(`new-${n}`) });

    // 40 at the end, then 40 between old ones (as a Git sync's topo order may place them).
    const appended = [...base, ...Array.from({ length: 40 }, (_, n) => newEntry(n))];
    const inserted = [
      ...appended.slice(0, 3000),
      ...Array.from({ length: 40 }, (_, n) => newEntry(40 + n)),
      ...appended.slice(3000),
    ];
    const extend = (
      stored: StoredRevisionMap,
      from: readonly RevisionEntry[],
      to: readonly RevisionEntry[],
    ) => map.extendRevisionMap('octocat', 'tail', importId, attempt, to, stored, changeOf(from, to));
    let stored: StoredRevisionMap = { generation: attempt, total: 5907, buckets, tail: [] };
    let list: RevisionEntry[] = base;
    for (const next of [appended, inserted]) {
      const extended = await extend(stored, list, next);
      expect(extended).toMatchObject({ total: next.length });
      stored = extended as StoredRevisionMap;
      list = next;
      // Written: the pages from the first that changed, and the header; no bucket.
      expect(await bucketItems()).toEqual(before);
      expect(
        (await map.pageOfRevisions('octocat', 'tail', importId, 2950, 100)).entries.concat(
          (await map.pageOfRevisions('octocat', 'tail', importId, 3050, 3000)).entries,
        ),
      ).toEqual(next.slice(2950));
      for (const entry of [next[0], next[2999], next[3000], next[5906], next.at(-1)])
        expect(await map.findRevision('octocat', 'tail', importId, entry?.originRevision ?? '')).toBe(
          entry?.commit,
        );
      expect(await map.findRevision('octocat', 'tail', importId, 'new-99')).toBeUndefined();
    }
    expect(stored.tail).toHaveLength(80);

    // 30 more: past MAX_TAIL, so the tail and they go into the buckets, and the tail empties.
    const folded = [...list, ...Array.from({ length: 30 }, (_, n) => newEntry(80 + n))];
    const last = await extend(stored, list, folded);
    expect(last).toEqual({ ...stored, total: folded.length, tail: [] });
    expect(await bucketItems()).not.toEqual(before);
    for (let n = 0; n < 110; n++)
      expect(await map.findRevision('octocat', 'tail', importId, `new-${n}`)).toBe(sha(`new-${n}`));
    expect(await map.findRevision('octocat', 'tail', importId, '17')).toBe(base[16]?.commit);
  });
});
