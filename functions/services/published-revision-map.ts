/**
 * Storing the revision map the push step published. A sync whose map only gains entries (the
 * usual case: new commits on existing branches; a Git origin's `--topo-order` may place them
 * before old ones) extends the stored generation: the pages from the first that changed, and the
 * header, instead of the whole map again (Lua's 5,907 entries are 120 items). The attempt's
 * directory keeps what was last stored (`stored-revisions`, its header beside it) and moves on
 * to the next sync with the raw history, so the next push compares with it without reading the
 * map back. Anything else (a rewrite, refs deleted or moved so that entries are gone, no or a stale
 * record, a header that moved on, a change too big for one transaction) writes a new generation,
 * as the first import does.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extendRevisionMap, lookupBuckets, storeRevisionMap } from '#data/imports/revision-map';
import { type RevisionEntry, revisionChange, type StoredRevisionMap } from '#domain/revision-map';
import { readRevisionList, writeRevisionList } from '#vcs/revision-map';

const storedList = (dir: string) => join(dir, 'stored-revisions');
const storedHeader = (dir: string) => join(dir, 'stored-revisions.json');

/** Stores `entries` as the import's map; false when the attempt is no longer current. */
export async function storePublishedRevisions(
  dir: string,
  key: { owner: string; repo: string; importId: number; attempt: number },
  entries: readonly RevisionEntry[],
): Promise<boolean> {
  const { owner, repo, importId, attempt } = key;
  const stored = await readStored(dir);
  const change = stored && revisionChange(stored.entries, entries);
  if (stored && change) {
    const outcome = await extendRevisionMap(owner, repo, importId, attempt, entries, stored.map, change);
    if (outcome === 'superseded') return false;
    if (outcome !== 'not-extended') {
      await saveStored(dir, outcome, entries);
      return true;
    }
  }
  if (!(await storeRevisionMap(owner, repo, importId, attempt, entries))) return false;
  await saveStored(
    dir,
    {
      generation: attempt,
      total: entries.length,
      buckets: lookupBuckets(entries.length),
      tail: [],
    },
    entries,
  );
  return true;
}

async function readStored(
  dir: string,
): Promise<{ map: StoredRevisionMap; entries: RevisionEntry[] } | undefined> {
  try {
    const map = JSON.parse(await readFile(storedHeader(dir), 'utf8')) as StoredRevisionMap;
    const entries = await readRevisionList(storedList(dir));
    return Number.isInteger(map.generation) && map.total === entries.length ? { map, entries } : undefined;
  } catch {
    return undefined;
  }
}

/** The header goes last: a record cut short has none and is not used. */
async function saveStored(dir: string, map: StoredRevisionMap, entries: readonly RevisionEntry[]) {
  await rm(storedHeader(dir), { force: true });
  await writeRevisionList(storedList(dir), entries);
  await writeFile(storedHeader(dir), JSON.stringify(map));
}
