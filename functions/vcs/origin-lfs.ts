/**
 * The origin's Git LFS objects (issue 28): a Git origin whose history holds LFS pointers (any
 * ref) has every object they name fetched through the origin's LFS batch API into the rewritten
 * repository's `lfs/objects`, whence the push step stores them in the hosted LFS store and counts
 * them against `IMPORT_MAX_BYTES`, as it does the objects `use_lfs` made.
 *
 * - The batch endpoint is `lfs.url` from the `.lfsconfig` at the repository's HEAD (the default
 *   branch's tip: git-lfs reads the checked-out one) when that is an http(s) URL; otherwise
 *   git-lfs's default for the URL (`<url>.git/info/lfs`, or `<url>/info/lfs` for a URL ending in
 *   `.git`). No other `.lfsconfig` key is read.
 * - Every request (the batch call and each action's `href`, with their redirects) goes through the
 *   network guard (`guarded-stream.ts`).
 * - The origin's credentials go to the batch endpoint and to an `href` that are on the origin's
 *   own scheme, host and port (an `href` only when it brings no `Authorization` of its own); never
 *   elsewhere (an `lfs.url` on another server, presigned URLs).
 * - Each object is checked while it streams: no more than its pointer's size is read, and it is
 *   kept only when its size and SHA-256 match.
 * - An object the origin lacks (or sends wrong) is not fatal: it is listed in the report
 *   (`missing_lfs_objects`: oid, size, first path and ref pointing to it, reason).
 * - Fetched objects are kept in the attempt's own cache (`cacheDir`, carried to the next sync
 *   with the rest of the attempt's directory) and hard-linked into the repository: a sync fetches
 *   only objects it has not fetched before. Objects `use_lfs` made are not fetched at all. (The
 *   hosted store is not asked: in AWS only the push step may read the bucket.)
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FindingEntry } from '#domain/import-report';
import { saveFinding } from './findings.ts';
import { runGit } from './git-command.ts';
import { type GitJob, localRun } from './git-job.ts';
import { guardedStream, readBounded } from './guarded-stream.ts';
import { lfsObjectPath } from './hosted-paths.ts';
import { findPointers, hasNewPointer, type LfsPointer, refsPointingTo } from './lfs-pointers.ts';
import { directorySize, oversizeError } from './limits.ts';
import type { Guard } from './network-guard.ts';
import { ForbiddenAddress, type OriginAccess, OriginFailed } from './origin.ts';

export interface OriginLfsJob {
  /** The origin; its credentials are opened only when an object is to be fetched. */
  readonly access: {
    readonly url: string;
    readonly credentials?: () => Promise<OriginAccess['credentials']>;
  };
  readonly guard: Guard;
  /** The repository that is pushed: its pointers are read, the objects written to its `lfs/objects`. */
  readonly repoDir: string;
  /** Where the attempt's findings live (`findings.ts`). */
  readonly workDir: string;
  /** `IMPORT_MAX_BYTES`: the repository with the objects to fetch may not pass it. */
  readonly maxBytes: number;
  /** Objects fetched before (git-lfs's layout below it), kept between syncs. */
  readonly cacheDir: string;
  /**
   * A sync's raw tips from before it fetched (`seen-history.ts`): when the last scan found no
   * pointer, only what they do not reach is read, and the whole history only if that holds one.
   */
  readonly seen?: readonly string[] | undefined;
  readonly idleTimeoutMs?: number;
}

export interface OriginLfsResult {
  readonly pointers: number;
  readonly fetched: number;
  readonly fetchedBytes: number;
  readonly missing: number;
}

/** Objects asked for per batch call (git-lfs sends 100). */
const BATCH_SIZE = 100;
/** Downloads at a time (git-lfs's `lfs.concurrenttransfers` default). */
const PARALLEL = 8;
const LFS_JSON = 'application/vnd.git-lfs+json';
/** A larger `.lfsconfig` is not read (git-lfs's are a few lines). */
const LFSCONFIG_MAX_BYTES = 64 * 1024;

/** The batch endpoint git-lfs uses for a remote URL. */
export function lfsEndpoint(url: string): string {
  const base = new URL(url);
  base.username = '';
  base.password = '';
  base.search = '';
  base.hash = '';
  const path = base.pathname.replace(/\/+$/, '');
  base.pathname = path.endsWith('.git') ? `${path}/info/lfs` : `${path}.git/info/lfs`;
  return base.toString();
}

/**
 * The batch endpoint: `lfs.url` from the `.lfsconfig` at HEAD when it is an http(s) URL (without
 * user or password, which the repository cannot give), else `lfsEndpoint(url)`.
 */
async function batchEndpoint(job: OriginLfsJob, git: GitJob): Promise<BatchEndpoint> {
  const run = localRun(job.repoDir, git);
  const value = await runGit(['cat-file', 'blob', 'HEAD:.lfsconfig'], {
    ...run,
    maxStdoutBytes: LFSCONFIG_MAX_BYTES,
  })
    .then((file) => runGit(['config', '--file', '-', '--get', 'lfs.url'], { ...run, input: file }))
    .then(
      (found) => found.toString('utf8').trim(),
      () => '',
    );
  const configured = URL.canParse(value) ? new URL(value) : undefined;
  if (configured?.protocol !== 'http:' && configured?.protocol !== 'https:')
    return { url: lfsEndpoint(job.access.url), configured: false };
  configured.username = '';
  configured.password = '';
  configured.hash = '';
  return { url: configured.toString().replace(/\/+$/, ''), configured: true };
}

/** Where the batch calls go, and whether the origin's `.lfsconfig` said so. */
interface BatchEndpoint {
  readonly url: string;
  readonly configured: boolean;
}

interface Missing {
  readonly pointer: LfsPointer;
  readonly reason: string;
}

/**
 * Fetches what the history's pointers name (see the module comment) and writes the
 * `missing_lfs_objects` finding. Only http(s) origins have a batch API: others are left alone.
 */
export async function fetchOriginLfs(job: OriginLfsJob, git: GitJob): Promise<OriginLfsResult> {
  const protocol = new URL(job.access.url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:')
    return { pointers: 0, fetched: 0, fetchedBytes: 0, missing: 0 };
  const pointers = (await nothingNew(job, git)) ? [] : await findPointers(job.repoDir, git);
  await mkdir(job.cacheDir, { recursive: true });
  await writeFile(pointerCountFile(job), String(pointers.length));
  const added: LfsPointer[] = [];
  for (const pointer of pointers)
    if ((await sizeOf(lfsObjectPath(job.repoDir, pointer.oid))) !== pointer.size) added.push(pointer);
  const announced = added.reduce((sum, pointer) => sum + pointer.size, 0);
  if ((await directorySize(job.repoDir)) + announced > job.maxBytes) throw oversizeError(job.maxBytes);
  const wanted: LfsPointer[] = [];
  for (const pointer of added)
    if ((await sizeOf(cachePath(job, pointer.oid))) === pointer.size) await place(job, pointer.oid);
    else wanted.push(pointer);

  const endpoint = wanted.length === 0 ? undefined : await batchEndpoint(job, git);
  // The origin's credentials only when its LFS server is on its own scheme, host and port.
  const onOrigin = endpoint && new URL(endpoint.url).origin === new URL(job.access.url).origin;
  const auth = onOrigin ? basic(await job.access.credentials?.()) : {};
  const missing: Missing[] = [];
  let fetched = 0;
  let fetchedBytes = 0;
  for (let start = 0; start < wanted.length; start += BATCH_SIZE) {
    const batch = wanted.slice(start, start + BATCH_SIZE);
    const answers = await askBatch(job, endpoint as BatchEndpoint, auth, batch);
    const downloads: Array<() => Promise<void>> = [];
    for (const pointer of batch) {
      const answer = answers.get(pointer.oid);
      const action = answer?.actions?.download;
      if (!action?.href) {
        const error = answer?.error;
        missing.push({
          pointer,
          reason: error ? `${error.code ?? ''} ${error.message ?? ''}`.trim() : 'not offered',
        });
        continue;
      }
      downloads.push(async () => {
        const failure = await download(job, auth, pointer, action);
        if (failure) missing.push({ pointer, reason: failure });
        else {
          await place(job, pointer.oid);
          fetched += 1;
          fetchedBytes += pointer.size;
        }
      });
    }
    await inParallel(downloads, PARALLEL);
  }
  await reportMissing(job, missing, git);
  return { pointers: pointers.length, fetched, fetchedBytes, missing: missing.length };
}

/** How many pointers the last scan found, kept with the cache (it moves on with the attempt). */
const pointerCountFile = (job: OriginLfsJob) => join(job.cacheDir, 'pointers-found');

/** A sync over a history that held no pointer, and whose new commits hold none either. */
async function nothingNew(job: OriginLfsJob, git: GitJob): Promise<boolean> {
  if (!job.seen) return false;
  const before = await readFile(pointerCountFile(job), 'utf8').catch(() => undefined);
  return before === '0' && !(await hasNewPointer(job.repoDir, git, job.seen));
}

interface BatchObject {
  readonly oid?: string;
  readonly actions?: {
    readonly download?: { readonly href?: string; readonly header?: Record<string, string> };
  };
  readonly error?: { readonly code?: number; readonly message?: string };
}

/** The origin's Authorization header (none without credentials). */
type OriginAuth = Record<string, string>;

const basic = (credentials: OriginAccess['credentials']): OriginAuth =>
  credentials
    ? {
        Authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`,
      }
    : {};

/** One batch call: the answer per oid. A server without LFS (404) answers none: all are missing. */
async function askBatch(
  job: OriginLfsJob,
  endpoint: BatchEndpoint,
  auth: OriginAuth,
  batch: readonly LfsPointer[],
): Promise<Map<string, BatchObject>> {
  const response = await guardedStream(`${endpoint.url}/objects/batch`, job.guard, {
    method: 'POST',
    headers: { Accept: LFS_JSON, 'Content-Type': LFS_JSON, ...auth },
    body: JSON.stringify({
      operation: 'download',
      transfers: ['basic'],
      objects: batch.map(({ oid, size }) => ({ oid, size })),
    }),
    idleTimeoutMs: job.idleTimeoutMs ?? 60_000,
    maxRedirects: 0,
  }).catch((error: unknown) => {
    throw error instanceof ForbiddenAddress && endpoint.configured
      ? new ForbiddenLfsAddress(
          error.address,
          "The origin's .lfsconfig names a Git LFS server at an address the importer may not reach",
        )
      : error;
  });
  const body = await readBounded(response.body, 8 * 1024 * 1024);
  const answers = new Map<string, BatchObject>();
  if (response.status === 404) return answers;
  if (response.status !== 200)
    throw new OriginFailed(`The origin's Git LFS server refused the batch request (HTTP ${response.status})`);
  let parsed: { objects?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as { objects?: unknown };
  } catch {
    throw new OriginFailed(
      "The origin's Git LFS server answered the batch request with something other than JSON",
    );
  }
  for (const object of Array.isArray(parsed.objects) ? (parsed.objects as BatchObject[]) : [])
    if (typeof object?.oid === 'string') answers.set(object.oid, object);
  return answers;
}

/**
 * Streams one object to a temporary file beside its place, checking size and SHA-256, and renames
 * it there. Returns why it is missing, or nothing when it arrived.
 */
async function download(
  job: OriginLfsJob,
  auth: OriginAuth,
  pointer: LfsPointer,
  action: { readonly href?: string; readonly header?: Record<string, string> },
): Promise<string | undefined> {
  const href = action.href as string;
  let target: URL;
  try {
    target = new URL(href);
  } catch {
    return 'the download href is not a URL';
  }
  const header = action.header ?? {};
  const ownAuthorization = Object.keys(header).some((name) => name.toLowerCase() === 'authorization');
  // Credentials only for the origin's own scheme, host and port, and only when the action brings none.
  const onOrigin = target.origin === new URL(job.access.url).origin;
  const response = await guardedStream(href, job.guard, {
    method: 'GET',
    headers: { ...header, ...(onOrigin && !ownAuthorization ? auth : {}) },
    idleTimeoutMs: job.idleTimeoutMs ?? 60_000,
    maxRedirects: 5,
  }).catch((error: unknown) => {
    throw error instanceof ForbiddenAddress
      ? new ForbiddenLfsAddress(
          error.address,
          "The origin's Git LFS server pointed to an address the importer may not reach",
        )
      : error;
  });
  if (response.status === 404 || response.status === 410) {
    response.body.resume();
    return `${response.status} from the download href`;
  }
  if (response.status !== 200) {
    response.body.resume();
    throw new OriginFailed(`The origin's Git LFS server did not send an object (HTTP ${response.status})`);
  }
  const path = cachePath(job, pointer.oid);
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomUUID()}.tmp`;
  const hash = createHash('sha256');
  let size = 0;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > pointer.size) return done(new OriginFailed('longer than its pointer says'));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(response.body, checked, createWriteStream(temporary));
    if (size !== pointer.size) return `the origin sent ${size} bytes, the pointer says ${pointer.size}`;
    if (hash.digest('hex') !== pointer.oid) return 'the content the origin sent does not hash to its oid';
    await rename(temporary, path);
    return undefined;
  } catch (error) {
    if (size > pointer.size) return `the origin sent more than the pointer's ${pointer.size} bytes`;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** A forbidden `lfs.url` or href, in words that say it is not the import's URL that is refused. */
class ForbiddenLfsAddress extends ForbiddenAddress {
  constructor(address: string, message: string) {
    super(address);
    this.message = message;
  }
}

const cachePath = (job: OriginLfsJob, oid: string) => lfsObjectPath(job.cacheDir, oid);

const sizeOf = (path: string): Promise<number | undefined> =>
  stat(path).then(
    (found) => (found.isFile() ? found.size : undefined),
    () => undefined,
  );

/** The cached object into the repository: a hard link (one file system), a copy otherwise. */
async function place(job: OriginLfsJob, oid: string): Promise<void> {
  const target = lfsObjectPath(job.repoDir, oid);
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true });
  await link(cachePath(job, oid), target).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EXDEV' && error.code !== 'EPERM') throw error;
    await copyFile(cachePath(job, oid), target);
  });
}

async function inParallel(tasks: ReadonlyArray<() => Promise<void>>, width: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      await task?.();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
}

async function reportMissing(job: OriginLfsJob, missing: readonly Missing[], git: GitJob): Promise<void> {
  const refs = await refsPointingTo(job.repoDir, new Set(missing.map(({ pointer }) => pointer.oid)), git);
  const entries: FindingEntry[] = [...missing]
    .sort((a, b) => (a.pointer.oid < b.pointer.oid ? -1 : 1))
    .map(({ pointer, reason }) => ({
      oid: pointer.oid,
      size: pointer.size,
      path: pointer.path,
      ref: refs.get(pointer.oid) ?? null,
      reason,
    }));
  await saveFinding(job.workDir, 'missing_lfs_objects', entries);
}
