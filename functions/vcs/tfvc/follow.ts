/**
 * Following a TFVC project after its import (a sync). Changesets are immutable, `tf destroy` aside,
 * so a sync keeps what the import left (raw.git, fast-import's marks named by changeset id, the
 * folders of `main`, the listing, the cursor) and replays only the changesets after the last one
 * imported, exactly as a whole import would have replayed them next: the raw history after any
 * number of syncs is a fresh import's, id for id. When the origin no longer has that last changeset
 * as it was imported (destroyed, or its author, date or comment differ), nothing kept can be
 * trusted and the sync imports the whole history afresh.
 *
 * Nothing kept names a path: the directory moves from attempt to attempt (`carryOver`), and the
 * job's git home, which does, is written again by every chunk (`prepareHome`).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { removeFinding } from '#vcs/findings';
import { type OriginAccess, startAfresh } from '#vcs/origin';
import { writeWhole } from '../whole-file.ts';
import { type ApiClient, apiUrl, call, isRecord } from './api-client.ts';
import { listChangesets, listedOf, MAX_COMMENT_LENGTH } from './changesets.ts';
import { cursor, LISTING_FILE, type ListedChangeset, MARKS_FILE, type TfvcIdentity } from './state.ts';

/** Read again by every sync: a label, shelveset or branch may come or go without a changeset. */
const SERVER_FINDINGS = ['tfvc_labels', 'tfvc_shelvesets', 'tfvc_branches'] as const;

/**
 * The adapter's `reopen`: the listing is cut back to the changesets raw.git holds, the cursor asks
 * for a new listing after the last of them and for the server findings again. A directory that
 * holds no replayed changeset (or one from before syncs kept `last`) starts afresh. Repeated, it
 * does the same again.
 */
export async function reopenTfvc(workDir: string): Promise<void> {
  const state = await cursor.load(workDir);
  const last = state.last;
  const listing = await readListing(workDir);
  if (
    state.collection === undefined ||
    state.project === undefined ||
    last === undefined ||
    state.replayed === 0 ||
    listing?.[state.replayed - 1]?.id !== last.id ||
    !(await exists(join(workDir, MARKS_FILE)))
  )
    return startAfresh(workDir);
  await writeWhole(join(workDir, LISTING_FILE), JSON.stringify(listing.slice(0, state.replayed)));
  for (const kind of SERVER_FINDINGS) await removeFinding(workDir, kind);
  await cursor.save(workDir, {
    ...state,
    listed: false,
    serverFindings: false,
    done: false,
    total: state.replayed,
  });
}

/**
 * The listing of a reopened import: the changesets replayed, then every changeset after `last`
 * (listed from its id on). Undefined when the origin no longer has `last` as it was imported: the
 * caller starts afresh. The listing comes first, so an origin that cannot be reached fails the
 * sync with what was kept intact rather than throwing it away.
 */
export async function listingAfter(
  api: ApiClient,
  access: OriginAccess,
  where: { readonly workDir: string; readonly collection: string; readonly project: string },
  pageSize: number,
  last: ListedChangeset,
): Promise<ListedChangeset[] | undefined> {
  const { workDir, collection, project } = where;
  const after = (await listChangesets(api, access, collection, project, pageSize, last.id)).filter(
    (changeset) => changeset.id > last.id,
  );
  const now = await call(
    api,
    apiUrl(collection, `_apis/tfvc/changesets/${last.id}`, { maxCommentLength: MAX_COMMENT_LENGTH }),
    access,
    `Reading changeset ${last.id}`,
    true,
  );
  const found = isRecord(now) ? listedOf(now) : undefined;
  if (found === undefined || !sameChangeset(found, last)) return undefined;
  return [...((await readListing(workDir)) ?? []), ...after];
}

/** What a commit is made of besides the changes: its author, committer, date and message. */
function sameChangeset(now: ListedChangeset, imported: ListedChangeset): boolean {
  const samePerson = (a: TfvcIdentity, b: TfvcIdentity) =>
    a.displayName === b.displayName && a.uniqueName === b.uniqueName;
  return (
    now.id === imported.id &&
    samePerson(now.author, imported.author) &&
    samePerson(now.committer, imported.committer) &&
    Date.parse(now.date) === Date.parse(imported.date) &&
    (now.truncated ? imported.comment.startsWith(now.comment) : now.comment === imported.comment)
  );
}

async function readListing(workDir: string): Promise<ListedChangeset[] | undefined> {
  try {
    return JSON.parse(await readFile(join(workDir, LISTING_FILE), 'utf8')) as ListedChangeset[];
  } catch {
    return undefined;
  }
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
