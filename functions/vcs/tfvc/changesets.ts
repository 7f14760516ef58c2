/**
 * Listing and reading changesets: every changeset touching `$/{project}`, then each one's changes
 * (paged as the server pages them) and the contents of the files it wrote.
 */
import { type UnstorableReason, unstorableReason } from '#domain/unstorable-paths';
import { type OriginAccess, OriginFailed } from '#vcs/origin';
import {
  type ApiClient,
  answerError,
  apiUrl,
  authError,
  call,
  contentType,
  isRecord,
  jsonOf,
  listOf,
  request,
  wantsCredentials,
} from './api-client.ts';
import type { ListedChangeset, TfvcIdentity } from './state.ts';

function identityOf(value: unknown): TfvcIdentity {
  const record = isRecord(value) ? value : {};
  const displayName = typeof record.displayName === 'string' ? record.displayName : '';
  const uniqueName = typeof record.uniqueName === 'string' ? record.uniqueName : '';
  return { displayName: displayName || uniqueName || 'Unknown', uniqueName };
}

/** A changeset as a listing (or `GET changesets/{id}`) describes it; undefined without a usable id. */
export function listedOf(entry: Record<string, unknown>): ListedChangeset | undefined {
  const id = entry.changesetId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) return undefined;
  const author = identityOf(entry.author);
  return {
    id,
    author,
    committer: isRecord(entry.checkedInBy) ? identityOf(entry.checkedInBy) : author,
    date: typeof entry.createdDate === 'string' ? entry.createdDate : '',
    comment: typeof entry.comment === 'string' ? entry.comment : '',
    truncated: entry.commentTruncated === true,
  };
}

/**
 * Every changeset touching `$/{project}`, oldest first, paged with `$top`/`$skip` until a page is
 * empty (a server may answer fewer than `$top` asked for: `$skip` moves by what came). With
 * `fromId`, only those from that id on (`searchCriteria.fromId`; whether the id itself is listed
 * is left open by the specification, "after this changesetID", so callers must not rely on it).
 */
export async function listChangesets(
  api: ApiClient,
  access: OriginAccess,
  collection: string,
  project: string,
  pageSize: number,
  fromId?: number,
): Promise<ListedChangeset[]> {
  const all = new Map<number, ListedChangeset>();
  for (let skip = 0; ; ) {
    const page = listOf(
      await call(
        api,
        apiUrl(`${collection}/${encodeURIComponent(project)}`, '_apis/tfvc/changesets', {
          'searchCriteria.itemPath': `$/${project}`,
          ...(fromId === undefined ? {} : { 'searchCriteria.fromId': fromId }),
          $orderby: 'id asc',
          $top: pageSize,
          $skip: skip,
        }),
        access,
        `Listing the changesets of $/${project}`,
      ),
    );
    if (page === undefined)
      throw new OriginFailed(
        `Listing the changesets of $/${project} failed: the origin sent a list the importer cannot read`,
      );
    for (const entry of page) {
      const listed = listedOf(entry);
      if (listed !== undefined) all.set(listed.id, listed);
    }
    if (page.length === 0) break;
    skip += page.length;
  }
  return [...all.values()].sort((a, b) => a.id - b.id);
}

export interface Change {
  /** `folder`: the folder exists after this changeset (added, branched, undeleted, renamed to). */
  readonly kind: 'delete' | 'rename-folder' | 'folder' | 'write';
  /** Relative to `$/{project}/`. */
  readonly path: string;
  /** A rename's old path, relative; undefined when it came from outside the project. */
  readonly from?: string;
  readonly content?: Buffer;
}

/**
 * `$top` asked for, and whether this server pages with `x-ms-continuationtoken`. The specification
 * promises neither full pages nor a page size: a server that sends the token while more remain
 * has ended a list when a page comes without one; one that never sends it is read with `$skip`
 * until a page is empty.
 */
export interface Paging {
  readonly size: number;
  tokens: boolean;
}

/** Long enough for any comment: `GET changesets/{id}` cuts at 2,000 characters unless told. */
export const MAX_COMMENT_LENGTH = 2 ** 31 - 1;

/** A file this changeset wrote at a path Git cannot store (`#domain/unstorable-paths`): not written. */
export interface UnstorableWrite {
  /** The server path, exactly as the origin spells it. */
  readonly serverPath: string;
  readonly reason: UnstorableReason;
}

export interface Changeset extends ListedChangeset {
  readonly changes: readonly Change[];
  /** Each path once, in the order the server listed them. */
  readonly unstorable: readonly UnstorableWrite[];
}

/**
 * The project-relative path of a server path, or undefined outside the project (or the root
 * itself). The path may be one Git cannot store: `storable` says.
 */
export function relative(serverPath: unknown, project: string): string | undefined {
  if (typeof serverPath !== 'string') return undefined;
  const prefix = `$/${project}/`;
  if (
    serverPath.length <= prefix.length ||
    serverPath.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()
  )
    return undefined;
  const rest = serverPath.slice(prefix.length).replace(/\/+$/, '');
  return rest === '' ? undefined : rest;
}

/** A project-relative path Git can store, else undefined. */
const storable = (path: string | undefined) =>
  path !== undefined && unstorableReason(path) === undefined ? path : undefined;

/**
 * A changeset's changes in the order they are applied: folder renames (their files move along),
 * then deletions and renamed files' old paths, then the folders that exist afterwards, then files
 * written with their content at this changeset. A folder rename may or may not list its files as renames too; both work.
 */
export async function readChangeset(
  api: ApiClient,
  access: OriginAccess,
  collection: string,
  project: string,
  listed: ListedChangeset,
  paging: Paging,
): Promise<Changeset> {
  let comment = listed.comment;
  if (listed.truncated) {
    const full = await call(
      api,
      apiUrl(collection, `_apis/tfvc/changesets/${listed.id}`, { maxCommentLength: MAX_COMMENT_LENGTH }),
      access,
      `Reading changeset ${listed.id}`,
    );
    if (isRecord(full) && typeof full.comment === 'string') comment = full.comment;
    if (isRecord(full) && full.commentTruncated === true)
      throw new OriginFailed(`The origin sent the comment of changeset ${listed.id} cut short`);
  }
  const raw: Record<string, unknown>[] = [];
  let continuation: string | undefined;
  const step = `Reading the changes of changeset ${listed.id}`;
  for (let skip = 0; ; ) {
    const response = await request(
      api,
      apiUrl(collection, `_apis/tfvc/changesets/${listed.id}/changes`, {
        $top: paging.size,
        ...(continuation === undefined ? { $skip: skip } : { continuationToken: continuation }),
      }),
      step,
    );
    if (wantsCredentials(response) || response.status === 403) throw authError(access);
    if (response.status !== 200) throw answerError(step, response, access);
    const page = listOf(jsonOf(response));
    if (page === undefined)
      throw new OriginFailed(`${step} failed: the origin sent a list the importer cannot read`);
    raw.push(...page);
    if (page.length === 0) break;
    const token = response.headers['x-ms-continuationtoken'];
    continuation = typeof token === 'string' && token !== '' ? token : undefined;
    if (continuation !== undefined) paging.tokens = true;
    else if (paging.tokens) break;
    else skip += page.length;
  }

  const deletes: Change[] = [];
  const folderRenames: Change[] = [];
  const folders: Change[] = [];
  const writes: { path: string; serverPath: string }[] = [];
  const unstorable: UnstorableWrite[] = [];
  for (const entry of raw) {
    const item = isRecord(entry.item) ? entry.item : {};
    const inProject = relative(item.path, project);
    const path = storable(inProject);
    const types = String(entry.changeType ?? '')
      .toLowerCase()
      .split(',')
      .map((type) => type.trim());
    const folder = item.isFolder === true;
    const source = types.includes('rename') ? storable(relative(entry.sourceServerItem, project)) : undefined;
    // A file written there, or a folder moved there with what it holds.
    const arrives = !types.includes('delete') && (!folder || source !== undefined);
    if (inProject !== undefined && path === undefined && arrives) {
      const serverPath = String(item.path);
      const reason = unstorableReason(inProject);
      if (reason !== undefined && !unstorable.some((write) => write.serverPath === serverPath))
        unstorable.push({ serverPath, reason });
    }
    if (path === undefined) {
      // Moved out of the project (or to a path Git cannot store): listed as a rename at its new
      // path, with no delete beside it.
      if (source !== undefined) deletes.push({ kind: 'delete', path: source });
      continue;
    }
    if (types.includes('delete')) {
      deletes.push({ kind: 'delete', path });
      continue;
    }
    if (folder) {
      if (source !== undefined && source !== path)
        folderRenames.push({ kind: 'rename-folder', path, from: source });
      folders.push({ kind: 'folder', path });
      continue;
    }
    if (source !== undefined && source !== path) deletes.push({ kind: 'delete', path: source });
    writes.push({ path, serverPath: String(item.path) });
  }
  const contents = await mapLimited(writes, 4, (write) =>
    itemContent(api, collection, write.serverPath, listed.id, access),
  );
  return {
    ...listed,
    comment,
    unstorable,
    changes: [
      ...folderRenames,
      ...deletes,
      ...folders,
      ...writes.map((write, i): Change => ({ kind: 'write', path: write.path, content: contents[i] })),
    ],
  };
}

/**
 * A file's bytes at a changeset. The server picks the format from `$format`, then `Accept`, and
 * answers the item's JSON metadata by default (`download=true` only asks for an attachment), so
 * both ask for an octet stream, and a JSON answer is refused rather than stored as the file.
 */
async function itemContent(
  api: ApiClient,
  collection: string,
  serverPath: string,
  changeset: number,
  access: OriginAccess,
): Promise<Buffer> {
  const step = `Reading the content of ${serverPath} at changeset ${changeset}`;
  const response = await request(
    api,
    apiUrl(collection, '_apis/tfvc/items', {
      path: serverPath,
      'versionDescriptor.version': changeset,
      'versionDescriptor.versionType': 'changeset',
      $format: 'octetStream',
    }),
    step,
    MAX_FILE_BYTES,
    'application/octet-stream',
  );
  if (wantsCredentials(response) || response.status === 403) throw authError(access);
  if (response.truncated)
    throw new OriginFailed(
      `${step} failed: the file is larger than the importer reads (${MAX_FILE_BYTES / 1024 ** 3} GiB)`,
    );
  if (response.status !== 200) throw answerError(step, response, access);
  if (contentType(response) === 'application/json')
    throw new OriginFailed(
      `The origin sent JSON instead of the content of ${serverPath} at changeset ${changeset} (asked for $format=octetStream)`,
    );
  return response.body;
}

/** One file is held in memory while it is replayed. */
const MAX_FILE_BYTES = 1024 ** 3;

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
