import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { importRevisionBucketKey } from '#data/keys';
import type { RevisionEntry, StoredRevisionMap } from '#domain/revision-map';
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

    // The header known (as the worker keeps it): nothing is read before the transaction. 130 new
    // entries are more than a tail holds: they go into the buckets.
    expect(
      await map.extendRevisionMap('octocat', 'followed', importId, attempt + 1, synced, {
        generation: attempt,
        total: 250,
        buckets: map.lookupBuckets(250),
        bucketed: 250,
      }),
    ).toEqual({ generation: attempt, total: 380, buckets: map.lookupBuckets(250), bucketed: 380 });
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
    expect(
      await map.extendRevisionMap('octocat', 'followed', importId, attempt + 1, more, {
        generation: attempt,
        total: 250,
      }),
    ).toBe('not-extended');
    expect(
      await map.extendRevisionMap('octocat', 'followed', importId, attempt + 1, more, {
        generation: attempt,
        total: 250,
        buckets: map.lookupBuckets(250),
        bucketed: 250,
      }),
    ).toBe('not-extended');
    // An attempt no longer current writes nothing.
    expect(
      await map.extendRevisionMap('octocat', 'followed', importId, attempt, more, {
        generation: attempt,
        total: 380,
      }),
    ).toBe('superseded');
    expect((await map.pageOfRevisions('octocat', 'followed', importId, 300, 100)).entries).toEqual(
      synced.slice(300),
    );
    expect(await map.findRevision('octocat', 'followed', importId, '385')).toBeUndefined();
  });

  it('keeps a sync’s few new entries out of the buckets (found in the last pages) until they pass MAX_TAIL', async () => {
    const { importId, attempt } = await newImport('tail');
    const all = entries(5907 + 3 * 40, 't');
    await map.storeRevisionMap('octocat', 'tail', importId, attempt, all.slice(0, 5907));
    const buckets = map.lookupBuckets(5907);
    const bucketKeys = Array.from({ length: buckets }, (_, bucket) =>
      importRevisionBucketKey('octocat', 'tail', importId, attempt, bucket),
    );
    const bucketItems = async () => {
      const items = await client.getItems(bucketKeys, true);
      return bucketKeys.map((key) => JSON.stringify(client.itemOf(items, key)?.found));
    };
    const before = await bucketItems();

    let stored: StoredRevisionMap = { generation: attempt, total: 5907, buckets, bucketed: 5907 };
    for (const total of [5947, 5987]) {
      const extended = await map.extendRevisionMap(
        'octocat',
        'tail',
        importId,
        attempt,
        all.slice(0, total),
        stored,
      );
      expect(extended).toEqual({ ...stored, total });
      stored = extended as StoredRevisionMap;
      // Written: the last pages and the header; no bucket.
      expect(await bucketItems()).toEqual(before);
      for (const entry of [all[0], all[5906], all[5907], all[total - 1]])
        expect(await map.findRevision('octocat', 'tail', importId, entry?.originRevision ?? '')).toBe(
          entry?.commit,
        );
      expect(await map.findRevision('octocat', 'tail', importId, String(total + 1))).toBeUndefined();
    }
    // 120 past the buckets: more than a tail, so all of them go in.
    const folded = await map.extendRevisionMap('octocat', 'tail', importId, attempt, all, stored);
    expect(folded).toEqual({ ...stored, total: all.length, bucketed: all.length });
    expect(await bucketItems()).not.toEqual(before);
    for (const entry of all.slice(5900))
      expect(await map.findRevision('octocat', 'tail', importId, entry.originRevision)).toBe(entry.commit);
    expect((await map.pageOfRevisions('octocat', 'tail', importId, 5900, 100)).entries).toEqual(
      all.slice(5900, 6000),
    );
  });
});
