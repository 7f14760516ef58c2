/**
 * The TFVC origin adapter: reads a Team Foundation Version Control project over the Azure DevOps /
 * TFS REST API (`api-version=6.0`: generally available for every endpoint used here on Azure
 * DevOps Services and on Azure DevOps Server 2020 and later) and replays its changesets, oldest
 * first, into `<workDir>/raw.git` with `git fast-import`, a bounded batch at a time.
 *
 * What is imported: the whole `$/{project}` tree becomes the branch `main`, with paths relative to
 * `$/{project}/`. TFVC branches are folders and stay folders (no Git branches are made); folders
 * themselves are not imported (Git has no empty directories); every file is a regular file (mode
 * 100644: TFVC has no executable bit). One commit per changeset: author = the changeset's author,
 * committer = who checked it in, date = its creation date (UTC), message = its comment (CRLF → LF,
 * ending with a newline; an empty comment becomes `Changeset N`). Shelvesets, labels, check-in notes, work item links and
 * changes outside `$/{project}` are not imported.
 *
 * Identities: TFVC has display names and unique names (`DOMAIN\user`, or an email on Azure
 * DevOps). The Git email is the unique name when it is an email, else `<user>@<collection host>`
 * (`tfvc.invalid` when the host is an address): made up, valid, and mappable afterwards.
 *
 * Network: every request goes through `guardedRequest`; credentials (any username, a personal
 * access token as password) travel only in a Basic `Authorization` header, which is never logged
 * nor put in a message. 401 or 203 (Azure DevOps' anonymous sign-in page) means "credentials
 * needed or refused".
 */
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gitRemoteId } from '#domain/imports';
import { checkOriginUrl } from '#domain/origin-url';
import { type AdapterOptions, adapterSetup } from './adapter-options.ts';
import { chunkCursor } from './chunk-cursor.ts';
import { gitAuthors } from './git.ts';
import { GitFailed, prepareHome, runGit } from './git-command.ts';
import { FAST_IMPORT_MALLOC } from './history.ts';
import { directorySize, objectCount, oversizeError, tooManyObjectsError } from './limits.ts';
import { type Guard, type GuardedResponse, guardedRequest } from './network-guard.ts';
import {
  type Detection,
  ForbiddenAddress,
  type OriginAccess,
  type OriginAdapter,
  OriginAuthFailed,
  type OriginAuthor,
  OriginFailed,
  type RawJob,
  rawRepositoryPath,
} from './origin.ts';

export const TFVC_API_VERSION = '6.0';

export interface TfvcAdapterOptions extends AdapterOptions {
  /** `$top` of a changeset or change listing (default 100, the API's documented default page). */
  readonly pageSize?: number;
  /** File contents held in memory before a batch goes to fast-import (default 64 MiB). */
  readonly batchBytes?: number;
  /** Time limit of one request (default 60 s; detection probes 30 s). */
  readonly requestTimeoutMs?: number;
  /** Projects of a collection probed for TFVC during detection (default 200). */
  readonly maxProbedProjects?: number;
}

/** What survives between chunks (the function may be killed between them, or during one). */
interface TfvcState {
  readonly version: 1;
  /** The collection's URL (no trailing slash) and the project, once located. */
  collection?: string;
  project?: string;
  /** Every changeset of the project is in `tfvc-changesets.json`. */
  listed: boolean;
  /** Changesets replayed into raw.git (a prefix of the listing). */
  replayed: number;
  total: number | null;
  done: boolean;
}

/** One changeset of the listing, as much as a commit needs (the full comment is fetched if cut). */
interface ListedChangeset {
  readonly id: number;
  readonly author: TfvcIdentity;
  readonly committer: TfvcIdentity;
  readonly date: string;
  readonly comment: string;
  readonly truncated: boolean;
}

interface TfvcIdentity {
  readonly displayName: string;
  readonly uniqueName: string;
}

const LISTING_FILE = 'tfvc-changesets.json';
const MARKS_FILE = 'tfvc-marks';

const cursor = chunkCursor<TfvcState>('raw-tfvc-state.json', () => ({
  version: 1,
  listed: false,
  replayed: 0,
  total: null,
  done: false,
}));

export function tfvcAdapter(options: TfvcAdapterOptions = {}): OriginAdapter {
  const { maxBytes, maxObjects, guardFor } = adapterSetup(options);
  const pageSize = options.pageSize ?? 100;
  const batchBytes = options.batchBytes ?? 64 * 1024 * 1024;
  const clientFor = (access: OriginAccess, timeoutMs: number) =>
    apiClient(access, guardFor(access), timeoutMs);

  return {
    vcs: 'tfvc',

    async detect(access) {
      const url = checkedUrl(access.url, access);
      const api = clientFor(access, options.requestTimeoutMs ?? 30_000);
      return detectTfvc(url, access, api, options.maxProbedProjects ?? 200);
    },

    async importRawChunk(job, budgetMs, onProgress) {
      const started = Date.now();
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.replayed, percent: 100 };
      const api = clientFor(job, options.requestTimeoutMs ?? 60_000);
      const home = join(job.workDir, 'home');
      const repo = rawRepositoryPath(job.workDir);
      await prepareHome(home);
      await ensureBareRepository(repo, home);

      if (state.collection === undefined || state.project === undefined) {
        const located = await locate(checkedUrl(job.url, job), job, api);
        state.collection = located.collection;
        state.project = located.project;
        await cursor.save(job.workDir, state);
      }
      const { collection, project } = state as Required<Pick<TfvcState, 'collection' | 'project'>>;
      const host = new URL(collection).hostname;
      const listingFile = join(job.workDir, LISTING_FILE);
      if (!state.listed) {
        const listing = await listChangesets(api, job, collection, project, pageSize);
        await writeWhole(listingFile, JSON.stringify(listing));
        state.listed = true;
        state.total = listing.length;
        await cursor.save(job.workDir, state);
      }
      const listing = JSON.parse(await readFile(listingFile, 'utf8')) as ListedChangeset[];
      state.total = listing.length;
      // A chunk killed after fast-import finished but before the cursor was saved: raw.git knows.
      state.replayed = await replayedSoFar(repo, home, job.workDir, listing, state.replayed);

      const tree = await filesOf(repo, home);
      const paging: Paging = { size: pageSize, tokens: false };
      const percent = () =>
        state.total ? Math.min(99, Math.floor((state.replayed / state.total) * 100)) : 0;
      let batches = 0;
      while (state.replayed < listing.length) {
        if (batches > 0 && Date.now() - started >= budgetMs) break;
        await checkLimits(repo, home, maxBytes, maxObjects);
        const stream: Buffer[] = [];
        let streamBytes = 0;
        let objects = 0;
        let next = state.replayed;
        while (next < listing.length) {
          const listed = listing[next];
          if (listed === undefined) break;
          const changeset = await readChangeset(api, job, collection, project, listed, paging);
          const commit = commitCommands(changeset, next > 0 ? listing[next - 1]?.id : undefined, host, tree);
          stream.push(...commit.parts);
          streamBytes += commit.bytes;
          objects += commit.objects;
          next += 1;
          if (streamBytes >= batchBytes || Date.now() - started >= budgetMs) break;
        }
        const size = await directorySize(repo);
        if (size + streamBytes > maxBytes) throw oversizeError(maxBytes);
        if ((await objectCount(repo, home)) + objects > maxObjects) throw tooManyObjectsError();
        stream.push(Buffer.from('done\n'));
        await fastImport(repo, home, join(job.workDir, MARKS_FILE), Buffer.concat(stream));
        state.replayed = next;
        batches += 1;
        await cursor.save(job.workDir, state);
        onProgress({ commitCount: state.replayed, percent: percent() });
      }
      state.done = state.replayed >= listing.length;
      await cursor.save(job.workDir, state);
      return {
        done: state.done,
        commitCount: state.replayed,
        percent: state.done ? 100 : percent(),
      };
    },

    async authors(job) {
      const repo = rawRepositoryPath(job.workDir);
      try {
        await stat(join(repo, 'HEAD'));
      } catch {
        return [];
      }
      const home = join(job.workDir, 'home');
      await prepareHome(home);
      const state = await cursor.load(job.workDir);
      let listing: ListedChangeset[] = [];
      try {
        listing = JSON.parse(await readFile(join(job.workDir, LISTING_FILE), 'utf8')) as ListedChangeset[];
      } catch {
        // nothing listed yet
      }
      const host = state.collection ? new URL(state.collection).hostname : '';
      const uniqueNames = new Map<string, string>();
      for (const changeset of listing)
        for (const person of [changeset.author, changeset.committer]) {
          const identity = gitIdentity(person, host);
          uniqueNames.set(
            gitRemoteId(identity.name, identity.email),
            person.uniqueName || person.displayName,
          );
        }
      return (await gitAuthors(repo, home)).map(
        (author): OriginAuthor => ({
          ...author,
          remoteName: uniqueNames.get(author.remoteId) ?? author.remoteName,
        }),
      );
    },
  };
}

function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'tfvc', access.allowedAddresses);
  if (check.ok) return check.url;
  if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
  throw new OriginFailed(check.message);
}

/* ------------------------------------------------------------------------------------------------
 * The REST client
 * ---------------------------------------------------------------------------------------------- */

interface ApiClient {
  /**
   * GET `url` with Basic auth, accepting `accept` (JSON unless told); the raw answer (transport
   * failures throw).
   */
  get(url: string, maxBytes?: number, accept?: string): Promise<GuardedResponse>;
}

function apiClient(access: OriginAccess, guard: Guard, timeoutMs: number): ApiClient {
  const common: Record<string, string> = {
    'user-agent': 'source-import (tfvc)',
    ...(access.credentials
      ? {
          authorization: `Basic ${Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64')}`,
        }
      : {}),
  };
  return {
    async get(url, maxBytes = 16 * 1024 * 1024, accept = 'application/json') {
      const headers = { ...common, accept };
      for (let attempt = 0; ; attempt++) {
        const response = await guardedRequest(url, guard, { headers, timeoutMs, maxBytes });
        if (!THROTTLED.has(response.status) || attempt >= 3) return response;
        // Azure DevOps throttles with 429 (or 503) and Retry-After: wait as told, at most 30 s, then retry.
        const after = Number(response.headers['retry-after']);
        const waitMs = Math.min(
          Number.isFinite(after) && after > 0 ? after * 1000 : 2000 * (attempt + 1),
          30_000,
        );
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    },
  };
}

const THROTTLED = new Set([429, 503]);

/** `base` + `/_apis/…` + a query whose names keep their `$` and whose values are encoded. */
function apiUrl(base: string, path: string, query: Readonly<Record<string, string | number>>): string {
  const pairs = Object.entries({ ...query, 'api-version': TFVC_API_VERSION }).map(
    ([name, value]) => `${name}=${encodeURIComponent(String(value))}`,
  );
  return `${base}/${path}?${pairs.join('&')}`;
}

const contentType = (response: GuardedResponse) =>
  String(response.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();

/** 401, or 203 with Azure DevOps' sign-in page for an anonymous caller. */
const wantsCredentials = (response: GuardedResponse) => response.status === 401 || response.status === 203;

/** The JSON body of a 200 `application/json` answer, else undefined. */
function jsonOf(response: GuardedResponse): unknown {
  if (response.status !== 200 || contentType(response) !== 'application/json' || response.truncated)
    return undefined;
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{count, value: [...]}`: the API's list envelope. */
function listOf(value: unknown): Record<string, unknown>[] | undefined {
  if (!isRecord(value) || !Array.isArray(value.value)) return undefined;
  return value.value.filter(isRecord);
}

/* ------------------------------------------------------------------------------------------------
 * Detection and locating the project
 * ---------------------------------------------------------------------------------------------- */

const trimmed = (url: URL) =>
  url
    .toString()
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '');

/**
 * The URL is a collection (it lists projects: the TFVC ones are the candidates) or a project in a
 * collection (`{collection}/{project}`: its `$/{project}` folder answers). Anything that is not
 * the API's JSON is `nothing`, so the other adapters' answers win.
 */
async function detectTfvc(
  url: URL,
  access: OriginAccess,
  api: ApiClient,
  maxProbed: number,
): Promise<Detection> {
  const probe = async (target: string) => {
    try {
      return await api.get(target, 4 * 1024 * 1024);
    } catch (error) {
      if (error instanceof ForbiddenAddress) throw error;
      return undefined; // unreachable, timed out, not HTTP
    }
  };
  const base = trimmed(url);
  const projects = await probe(apiUrl(base, '_apis/projects', { $top: maxProbed }));
  if (!projects) return { kind: 'nothing' };
  if (wantsCredentials(projects)) return { kind: 'needs_auth' };
  const listed = listOf(jsonOf(projects));
  if (listed) {
    const names = listed.map((project) => project.name).filter((name) => typeof name === 'string');
    const wanted = access.tfvcProject;
    const ordered =
      wanted !== undefined && names.some((name) => name.toLowerCase() === wanted.toLowerCase())
        ? names.filter((name) => name.toLowerCase() === wanted.toLowerCase())
        : names;
    const tfvc: string[] = [];
    for (const name of ordered.slice(0, maxProbed)) {
      const root = await probe(projectRootUrl(base, name));
      if (root && wantsCredentials(root)) return { kind: 'needs_auth' };
      if (root && isProjectRoot(jsonOf(root), name)) tfvc.push(name);
    }
    if (tfvc.length === 0) return { kind: 'nothing' };
    if (tfvc.length === 1) return { kind: 'found', vcs: 'tfvc' };
    return {
      kind: 'multiple',
      choices: tfvc.map((name) => ({ vcs: 'tfvc' as const, humanName: name, tfvcProject: name })),
    };
  }
  const split = splitProjectUrl(base);
  if (!split) return { kind: 'nothing' };
  const root = await probe(projectRootUrl(split.collection, split.project));
  if (!root) return { kind: 'nothing' };
  if (wantsCredentials(root)) return { kind: 'needs_auth' };
  return isProjectRoot(jsonOf(root), split.project) ? { kind: 'found', vcs: 'tfvc' } : { kind: 'nothing' };
}

const projectRootUrl = (collection: string, project: string) =>
  apiUrl(collection, '_apis/tfvc/items', { scopePath: `$/${project}`, recursionLevel: 'None' });

/** The answer for `$/{project}` with recursion None holds a folder item with that path (at any place). */
function isProjectRoot(value: unknown, project: string): boolean {
  const items = listOf(value) ?? (isRecord(value) ? [value] : []);
  return items.some(
    (item) => typeof item.path === 'string' && item.path.toLowerCase() === `$/${project}`.toLowerCase(),
  );
}

/** `{collection}/{project}` → both (the project's name decoded), or undefined for a bare host. */
function splitProjectUrl(base: string): { collection: string; project: string } | undefined {
  const url = new URL(base);
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = segments.pop();
  if (last === undefined) return undefined;
  let project: string;
  try {
    project = decodeURIComponent(last);
  } catch {
    return undefined;
  }
  const collection = `${url.origin}${segments.length > 0 ? `/${segments.join('/')}` : ''}`;
  return { collection, project };
}

/**
 * Which project of which collection to import: `tfvcProject` (given at `PUT`, or chosen after
 * `detection_found_multiple`), else the project the URL names, else the collection's only TFVC
 * project. Failures here are the user's to read.
 */
async function locate(
  url: URL,
  job: RawJob,
  api: ApiClient,
): Promise<{ collection: string; project: string }> {
  const wanted = job.tfvcProject ?? job.choice?.tfvcProject;
  const base = trimmed(url);
  const projects = await call(api, apiUrl(base, '_apis/projects', { $top: 1000 }), job, true);
  let candidates: { collection: string; project: string }[];
  if (projects !== undefined && listOf(projects)) {
    const names = (listOf(projects) ?? [])
      .map((project) => project.name)
      .filter((name): name is string => typeof name === 'string');
    const chosen =
      wanted === undefined ? names : names.filter((name) => name.toLowerCase() === wanted.toLowerCase());
    if (wanted !== undefined && chosen.length === 0)
      throw new OriginFailed(`The collection at ${base} has no project named ${wanted}`);
    candidates = chosen.map((project) => ({ collection: base, project }));
  } else {
    const split = splitProjectUrl(base);
    if (!split) throw new OriginFailed(`No TFVC collection or project was found at ${base}`);
    candidates = [wanted === undefined ? split : { collection: split.collection, project: wanted }];
  }
  const tfvc: { collection: string; project: string }[] = [];
  for (const candidate of candidates) {
    const root = await call(api, projectRootUrl(candidate.collection, candidate.project), job, true);
    if (root !== undefined && isProjectRoot(root, candidate.project)) tfvc.push(candidate);
  }
  const only = tfvc[0];
  if (only === undefined)
    throw new OriginFailed(
      wanted === undefined
        ? `No TFVC project was found at ${base}`
        : `The project ${wanted} at ${base} has no TFVC repository`,
    );
  if (tfvc.length > 1)
    throw new OriginFailed(
      `The collection at ${base} has several TFVC projects: choose one with tfvc_project`,
    );
  return only;
}

/**
 * One API call during the import: its JSON, or an error the user may read. With `missingOk`, a
 * 404 (or another non-JSON answer) is undefined instead of an error.
 */
async function call(api: ApiClient, url: string, access: OriginAccess, missingOk = false): Promise<unknown> {
  const response = await api.get(url);
  if (wantsCredentials(response) || response.status === 403) throw authError(access);
  if (response.truncated) throw new OriginFailed('The origin sent an answer larger than the importer reads');
  const json = jsonOf(response);
  if (json !== undefined) return json;
  if (missingOk) return undefined;
  const where = new URL(url);
  if (response.status === 404)
    throw new OriginFailed(
      `The origin ${where.host} answered 404 for ${where.pathname}: not a TFVC collection`,
    );
  throw new OriginFailed(
    `The origin ${where.host} answered ${response.status} ${contentType(response) || 'without a type'} for ${where.pathname}, not the TFVC API's JSON`,
  );
}

const authError = (access: OriginAccess) =>
  new OriginAuthFailed(
    access.credentials === undefined
      ? 'The origin requires a username and password (a personal access token as the password)'
      : 'The origin refused the username and password',
  );

/* ------------------------------------------------------------------------------------------------
 * Listing and reading changesets
 * ---------------------------------------------------------------------------------------------- */

function identityOf(value: unknown): TfvcIdentity {
  const record = isRecord(value) ? value : {};
  const displayName = typeof record.displayName === 'string' ? record.displayName : '';
  const uniqueName = typeof record.uniqueName === 'string' ? record.uniqueName : '';
  return { displayName: displayName || uniqueName || 'Unknown', uniqueName };
}

/**
 * Every changeset touching `$/{project}`, oldest first, paged with `$top`/`$skip` until a page is
 * empty (a server may answer fewer than `$top` asked for: `$skip` moves by what came).
 */
async function listChangesets(
  api: ApiClient,
  access: OriginAccess,
  collection: string,
  project: string,
  pageSize: number,
): Promise<ListedChangeset[]> {
  const all = new Map<number, ListedChangeset>();
  for (let skip = 0; ; ) {
    const page = listOf(
      await call(
        api,
        apiUrl(`${collection}/${encodeURIComponent(project)}`, '_apis/tfvc/changesets', {
          'searchCriteria.itemPath': `$/${project}`,
          $orderby: 'id asc',
          $top: pageSize,
          $skip: skip,
        }),
        access,
      ),
    );
    if (page === undefined)
      throw new OriginFailed('The origin sent a changeset list the importer cannot read');
    for (const entry of page) {
      const id = entry.changesetId;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) continue;
      const author = identityOf(entry.author);
      all.set(id, {
        id,
        author,
        committer: isRecord(entry.checkedInBy) ? identityOf(entry.checkedInBy) : author,
        date: typeof entry.createdDate === 'string' ? entry.createdDate : '',
        comment: typeof entry.comment === 'string' ? entry.comment : '',
        truncated: entry.commentTruncated === true,
      });
    }
    if (page.length === 0) break;
    skip += page.length;
  }
  return [...all.values()].sort((a, b) => a.id - b.id);
}

interface Change {
  readonly kind: 'delete' | 'rename-folder' | 'write';
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
interface Paging {
  readonly size: number;
  tokens: boolean;
}

/** Long enough for any comment: `GET changesets/{id}` cuts at 2,000 characters unless told. */
const MAX_COMMENT_LENGTH = 2 ** 31 - 1;

interface Changeset extends ListedChangeset {
  readonly changes: readonly Change[];
}

/** The project-relative path of a server path, or undefined outside the project (or the root itself). */
function relative(serverPath: unknown, project: string): string | undefined {
  if (typeof serverPath !== 'string') return undefined;
  const prefix = `$/${project}/`;
  if (
    serverPath.length <= prefix.length ||
    serverPath.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()
  )
    return undefined;
  const rest = serverPath.slice(prefix.length).replace(/\/+$/, '');
  if (
    rest === '' ||
    rest.split('/').some((part) => part === '' || part === '.' || part === '..' || part === '.git')
  )
    return undefined;
  return rest;
}

/**
 * A changeset's changes in the order they are applied: folder renames (their files move along),
 * then deletions and renamed files' old paths, then files written with their content at this
 * changeset. A folder rename may or may not list its files as renames too; both work.
 */
async function readChangeset(
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
    );
    if (isRecord(full) && typeof full.comment === 'string') comment = full.comment;
    if (isRecord(full) && full.commentTruncated === true)
      throw new OriginFailed(`The origin sent the comment of changeset ${listed.id} cut short`);
  }
  const raw: Record<string, unknown>[] = [];
  let continuation: string | undefined;
  for (let skip = 0; ; ) {
    const response = await api.get(
      apiUrl(collection, `_apis/tfvc/changesets/${listed.id}/changes`, {
        $top: paging.size,
        ...(continuation === undefined ? { $skip: skip } : { continuationToken: continuation }),
      }),
    );
    if (wantsCredentials(response) || response.status === 403) throw authError(access);
    const page = listOf(jsonOf(response));
    if (page === undefined)
      throw new OriginFailed(`The origin sent changes of changeset ${listed.id} the importer cannot read`);
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
  const writes: { path: string; serverPath: string }[] = [];
  for (const entry of raw) {
    const item = isRecord(entry.item) ? entry.item : {};
    const path = relative(item.path, project);
    const types = String(entry.changeType ?? '')
      .toLowerCase()
      .split(',')
      .map((type) => type.trim());
    const folder = item.isFolder === true;
    const source = types.includes('rename') ? relative(entry.sourceServerItem, project) : undefined;
    if (path === undefined) {
      // Moved out of the project: listed as a rename at its new path, with no delete beside it.
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
    changes: [
      ...folderRenames,
      ...deletes,
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
  const response = await api.get(
    apiUrl(collection, '_apis/tfvc/items', {
      path: serverPath,
      'versionDescriptor.version': changeset,
      'versionDescriptor.versionType': 'changeset',
      $format: 'octetStream',
    }),
    MAX_FILE_BYTES,
    'application/octet-stream',
  );
  if (wantsCredentials(response) || response.status === 403) throw authError(access);
  if (response.truncated)
    throw new OriginFailed(
      `${serverPath} is larger than the importer reads (${MAX_FILE_BYTES / 1024 ** 3} GiB)`,
    );
  if (response.status !== 200)
    throw new OriginFailed(
      `The origin answered ${response.status} for ${serverPath} at changeset ${changeset}`,
    );
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

/* ------------------------------------------------------------------------------------------------
 * Replaying into raw.git
 * ---------------------------------------------------------------------------------------------- */

const EMAIL = /^[^\s<>@\\]+@[^\s<>@\\]+\.[^\s<>@\\]+$/;

/** The Git name and email of a TFVC identity (see the module comment). */
export function gitIdentity(person: TfvcIdentity, host: string): { name: string; email: string } {
  const name =
    (person.displayName || person.uniqueName || 'Unknown').replace(/[<>\n\r\0]/g, '').trim() || 'Unknown';
  if (EMAIL.test(person.uniqueName)) return { name, email: person.uniqueName };
  const user = (person.uniqueName.split('\\').at(-1) || name)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  const domain = /[a-z]/i.test(host) && !host.includes(':') ? host.toLowerCase() : 'tfvc.invalid';
  return { name, email: `${user || 'user'}@${domain}` };
}

/** fast-import's C-style quoted path (always quoted: spaces, quotes and non-ASCII stay exact). */
const quote = (path: string) => `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

function epochSeconds(date: string): number {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * The fast-import commands of one changeset: commit `:id` on `refs/heads/main` after `:previous`.
 * `tree` (the files of main so far) is kept current, so only what exists is moved or deleted:
 * fast-import refuses to rename a path that is not there (an empty TFVC folder, for one).
 */
function commitCommands(
  changeset: Changeset,
  previous: number | undefined,
  host: string,
  tree: Set<string>,
): { parts: Buffer[]; bytes: number; objects: number } {
  const author = gitIdentity(changeset.author, host);
  const committer = gitIdentity(changeset.committer, host);
  const when = `${epochSeconds(changeset.date)} +0000`;
  const comment = changeset.comment.replace(/\r\n?/g, '\n');
  const text = comment.trim() === '' ? `Changeset ${changeset.id}` : comment;
  const message = Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
  const head = [
    'commit refs/heads/main',
    `mark :${changeset.id}`,
    `author ${author.name} <${author.email}> ${when}`,
    `committer ${committer.name} <${committer.email}> ${when}`,
    `data ${message.length}`,
  ].join('\n');
  const parts: Buffer[] = [Buffer.from(`${head}\n`), message, Buffer.from('\n')];
  if (previous !== undefined) parts.push(Buffer.from(`from :${previous}\n`));
  const under = (path: string) =>
    tree.has(path) ? [path] : [...tree].filter((file) => file.startsWith(`${path}/`));
  let objects = 1;
  for (const change of changeset.changes) {
    if (change.kind === 'delete') {
      const gone = under(change.path);
      if (gone.length === 0) continue;
      for (const file of gone) tree.delete(file);
      parts.push(Buffer.from(`D ${quote(change.path)}\n`));
    } else if (change.kind === 'rename-folder' && change.from !== undefined) {
      const from = change.from;
      const moved = under(from);
      if (moved.length === 0) continue;
      for (const file of moved) {
        tree.delete(file);
        tree.add(`${change.path}${file.slice(from.length)}`);
      }
      parts.push(Buffer.from(`R ${quote(from)} ${quote(change.path)}\n`));
    } else if (change.kind === 'write' && change.content !== undefined) {
      tree.add(change.path);
      parts.push(Buffer.from(`M 100644 inline ${quote(change.path)}\ndata ${change.content.length}\n`));
      parts.push(change.content, Buffer.from('\n'));
      objects += 1;
    }
  }
  parts.push(Buffer.from('\n'));
  return { parts, bytes: parts.reduce((sum, part) => sum + part.length, 0), objects };
}

/** The files of main (none before the first commit). */
async function filesOf(repo: string, home: string): Promise<Set<string>> {
  try {
    await local(repo, home, ['rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  } catch {
    return new Set();
  }
  const out = await runGit(['ls-tree', '-r', '-z', '--name-only', 'refs/heads/main'], {
    cwd: repo,
    home,
    transport: 'local',
    timeoutMs: 600_000,
    maxStdoutBytes: 1024 * 1024 * 1024,
  });
  return new Set(
    out
      .toString('utf8')
      .split('\0')
      .filter((path) => path !== ''),
  );
}

const local = (repo: string, home: string, args: readonly string[], input?: Buffer) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000, input, env: FAST_IMPORT_MALLOC });

async function ensureBareRepository(repo: string, home: string): Promise<void> {
  try {
    await stat(join(repo, 'HEAD'));
  } catch {
    await rm(repo, { recursive: true, force: true });
    await mkdir(repo, { recursive: true });
    await runGit(['init', '--bare', '--quiet', '--', repo], {
      cwd: home,
      home,
      transport: 'local',
      timeoutMs: 30_000,
    });
  }
}

async function fastImport(repo: string, home: string, marks: string, stream: Buffer): Promise<void> {
  try {
    await local(
      repo,
      home,
      ['fast-import', '--quiet', '--done', `--import-marks-if-exists=${marks}`, `--export-marks=${marks}`],
      stream,
    );
  } catch (error) {
    if (error instanceof GitFailed) {
      const lines = error.stderr.trim().split('\n');
      const line = lines.find((entry) => entry.startsWith('fatal:')) ?? lines.at(-1) ?? '';
      throw new OriginFailed(`Replaying the TFVC history failed: ${line.slice(0, 200)}`);
    }
    throw error;
  }
}

/**
 * How many changesets of the listing raw.git holds: the one `main` points at (by its mark) and
 * those before it. Equal to the cursor's count unless a chunk died between fast-import and the
 * cursor write.
 */
async function replayedSoFar(
  repo: string,
  home: string,
  workDir: string,
  listing: readonly ListedChangeset[],
  saved: number,
): Promise<number> {
  let tip: string;
  try {
    tip = (await local(repo, home, ['rev-parse', '--verify', '--quiet', 'refs/heads/main']))
      .toString()
      .trim();
  } catch {
    return 0;
  }
  let marks: string;
  try {
    marks = await readFile(join(workDir, MARKS_FILE), 'utf8');
  } catch {
    return saved;
  }
  const line = marks.split('\n').find((entry) => entry.endsWith(` ${tip}`));
  const id = Number(line?.slice(1, line.indexOf(' ')));
  const index = listing.findIndex((changeset) => changeset.id === id);
  return index < 0 ? saved : index + 1;
}

async function checkLimits(repo: string, home: string, maxBytes: number, maxObjects: number): Promise<void> {
  if ((await directorySize(repo)) > maxBytes) throw oversizeError(maxBytes);
  if ((await objectCount(repo, home)) > maxObjects) throw tooManyObjectsError();
}

async function writeWhole(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}
