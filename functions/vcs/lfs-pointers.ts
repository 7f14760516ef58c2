/**
 * The Git LFS pointer files a history holds, on every ref: blobs under 1024 bytes (git-lfs's own
 * cut-off) whose content is a pointer (`version https://git-lfs.github.com/spec/v1`, `oid
 * sha256:…`, `size …`), whatever `.gitattributes` says, as `git lfs fetch --all` finds them.
 */
import { blobSizes } from './blob-sizes.ts';
import { runGit } from './git-command.ts';
import { type GitJob, localRun } from './git-job.ts';
import { excludingSeen } from './seen-history.ts';

/** One object a pointer names, with the first path seen pointing to it. */
export interface LfsPointer {
  readonly oid: string;
  readonly size: number;
  readonly path: string;
}

/** git-lfs reads no blob of this size or more as a pointer. */
const POINTER_MAX_BYTES = 1024;
/** Blobs read per `cat-file --batch` call (at most about 50 MiB of answer). */
const BLOBS_PER_CALL = 50_000;

const POINTER =
  /^version https:\/\/(?:git-lfs\.github\.com|hawser\.github\.com)\/spec\/v1\n(?:ext-[^\n]*\n)*oid sha256:([0-9a-f]{64})\nsize (\d+)\n/;

/** The pointer a blob's content is, if it is one. */
export function parsePointer(content: string): { oid: string; size: number } | undefined {
  const match = POINTER.exec(content);
  if (!match?.[1] || match[2] === undefined) return undefined;
  const size = Number(match[2]);
  return Number.isSafeInteger(size) ? { oid: match[1], size } : undefined;
}

/**
 * The blobs under the cut-off reachable from `revs`, each with its first path. The filter keeps the
 * listing to those blobs (no commits or trees, only the tips given, which have no path), so it
 * stays small on a large history (`object:type` needs git 2.32; the image has bookworm's 2.39).
 */
async function smallBlobs(
  repo: string,
  job: GitJob,
  revs: readonly string[],
  input?: string,
): Promise<Map<string, string>> {
  const listing = await runGit(
    [
      'rev-list',
      '--objects',
      `--filter=combine:object:type=blob+blob:limit=${POINTER_MAX_BYTES - 1}`,
      ...revs,
    ],
    { ...localRun(repo, job), ...(input === undefined ? {} : { input }) },
  );
  const paths = new Map<string, string>();
  for (const line of listing.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space === 40 || space === 64) {
      const oid = line.slice(0, space);
      if (!paths.has(oid)) paths.set(oid, line.slice(space + 1));
    }
  }
  return paths;
}

/** The shortest content a pointer can have: the (shorter, legacy) version line, its oid, `size 0`. */
const POINTER_MIN_BYTES =
  'version https://hawser.github.com/spec/v1\n'.length + 'oid sha256:\n'.length + 64 + 'size 0\n'.length;

/**
 * Every object the pointers of the history name (one entry per oid, its first path). Most
 * histories hold none: the object database is asked first (sizes, then the few blobs of a
 * pointer's size), which costs a fraction of the walk of every commit's trees that finding their
 * paths takes, and the walk runs only when a pointer is stored.
 */
export const findPointers = async (repo: string, job: GitJob): Promise<LfsPointer[]> =>
  (await storesPointer(repo, job)) ? pointersIn(repo, job, ['--all']) : [];

/**
 * Whether any blob the repository stores (`blob-sizes.ts`: a superset of what `--all` reaches) is
 * a pointer.
 */
async function storesPointer(repo: string, job: GitJob): Promise<boolean> {
  const candidates = [
    ...(
      await blobSizes(repo, job, (bytes) => bytes >= POINTER_MIN_BYTES && bytes < POINTER_MAX_BYTES)
    ).keys(),
  ];
  for (let start = 0; start < candidates.length; start += BLOBS_PER_CALL) {
    const slice = candidates.slice(start, start + BLOBS_PER_CALL);
    const contents = await runGit(['cat-file', '--batch'], {
      ...localRun(repo, job),
      input: `${slice.join('\n')}\n`,
    });
    if (blobContents(contents, slice.length).some((content) => parsePointer(content))) return true;
  }
  return false;
}

/** The contents of `count` blobs in a `cat-file --batch` answer (`<oid> blob <size>\n<content>\n` each). */
function blobContents(answer: Buffer, count: number): string[] {
  const contents: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const headerEnd = answer.indexOf(10, at);
    const size = Number(answer.subarray(at, headerEnd).toString('latin1').split(' ')[2]);
    contents.push(answer.subarray(headerEnd + 1, headerEnd + 1 + size).toString('utf8'));
    at = headerEnd + 1 + size + 1;
  }
  return contents;
}

/**
 * Whether any pointer is among the objects the refs reach that `seen` (commits already looked at)
 * does not: a sync's question when the history before held no pointer. Everything is read when
 * `seen` names an object the repository lacks (`excludingSeen`).
 */
export async function hasNewPointer(repo: string, job: GitJob, seen: readonly string[]): Promise<boolean> {
  const found = await excludingSeen(seen, (args, input) => pointersIn(repo, job, ['--all', ...args], input));
  return found.length > 0;
}

/** The pointers reachable from `revs`, one per oid (its first path). */
async function pointersIn(
  repo: string,
  job: GitJob,
  revs: readonly string[],
  input?: string,
): Promise<LfsPointer[]> {
  const paths = await smallBlobs(repo, job, revs, input);
  if (paths.size === 0) return [];
  const blobs = [...paths.keys()];
  const found = new Map<string, LfsPointer>();
  // In slices: each answer stays far below runGit's output limit (at most 1 KiB a blob).
  for (let start = 0; start < blobs.length; start += BLOBS_PER_CALL) {
    const slice = blobs.slice(start, start + BLOBS_PER_CALL);
    const contents = await runGit(['cat-file', '--batch'], {
      ...localRun(repo, job),
      input: `${slice.join('\n')}\n`,
    });
    blobContents(contents, slice.length).forEach((content, index) => {
      const pointer = parsePointer(content);
      if (pointer && !found.has(pointer.oid))
        found.set(pointer.oid, { ...pointer, path: paths.get(slice[index] ?? '') ?? '' });
    });
  }
  return [...found.values()];
}

/**
 * The first ref (in refname order) whose history holds a pointer to each of `oids` (the report
 * names it for an object the origin lacks). One walk per ref until every oid has one.
 */
export async function refsPointingTo(
  repo: string,
  oids: ReadonlySet<string>,
  job: GitJob,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (oids.size === 0) return found;
  const refs = (await runGit(['for-each-ref', '--format=%(refname)'], localRun(repo, job)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
  for (const ref of refs) {
    for (const pointer of await pointersIn(repo, job, [ref]))
      if (oids.has(pointer.oid) && !found.has(pointer.oid)) found.set(pointer.oid, ref);
    if (found.size === oids.size) break;
  }
  return found;
}
