/**
 * The import's history step, between the raw fetch and the push: find the large files, and
 * rewrite the raw history (authors, Git LFS) into the repository that is published. The raw
 * repository (`<workDir>/raw.git`, every branch and annotated tag of the origin, HEAD naming its
 * default branch) is only read here, never changed, so a later change (an author mapped after
 * `complete`) rewrites again from it.
 *
 * Rules that keep ids intact: nothing is rewritten when nothing changes (no mapped author, no
 * large file or no LFS choice, no path to leave out: none that `checkHistory` warns of, no `.hg`
 * folder, `hg-metadata-scan.ts`): no output is written then, and the raw
 * history itself is published (`publishedHistory`), with exactly the raw ids.
 * `git lfs migrate` is run only when a large file exists (it rewrites annotated tags even with no
 * large file, dropping their messages' trailing newline; the messages are restored after it).
 *
 * The rewrite is held to the import's limits like the raw step: the raw history must pass git's
 * own object checks (`checkHistory`), and the output, Git LFS objects included, may not pass
 * `IMPORT_MAX_BYTES` or `IMPORT_MAX_OBJECTS` (LFS expands what compressed well in Git).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FindingEntry } from '#domain/import-report';
import type { LargeFile } from '#domain/imports';
import { gitIdentityText, splitGitRemoteId } from '#domain/imports';
import { blobSizes } from './blob-sizes.ts';
import { runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';
import { hiddenPaths, stepFailure } from './git-words.ts';
import { holdsHgMetadata } from './hg-metadata-scan.ts';
import { checkHistory } from './history-check.ts';
import { dropCallback, droppedPaths, renameSlashNames, slashMarker } from './history-drop.ts';
import { migrateToLfs } from './lfs-migrate.ts';
import { checkObjects, directorySize, type ImportLimits, importLimits, withinSize } from './limits.ts';
import { headBranch, pointHead } from './repository-head.ts';
import { readCommitMaps } from './revision-map.ts';

export type { GitJob } from './git-job.ts';

/**
 * Where the rewrite reads a raw history whose tree entries holding `/` it renamed
 * (`renameSlashNames`), beside outDir for the time of the rewrite: a repository the job's git
 * must trust (`prepareHome`).
 */
export const renamedRawDir = (outDir: string): string => join(dirname(outDir), 'raw-renamed.git');

/** A person as the user wants them to appear: `remoteId` names the origin identity (`gitRemoteId`). */
export interface AuthorMapping {
  readonly remoteId: string;
  readonly name: string;
  readonly email: string;
}

/** `opt_in`: large files become Git LFS objects; `opt_out`: they are removed; `none`: kept as they are. */
export type LfsHandling = 'opt_in' | 'opt_out' | 'none';

/** The limits default to the service's (`IMPORT_MAX_BYTES`, `IMPORT_MAX_OBJECTS`). */
export interface RewriteOptions extends Partial<ImportLimits> {
  /** Authors whose name or email the user changed; others (and unchanged entries) are ignored. */
  readonly authors: readonly AuthorMapping[];
  readonly lfs: LfsHandling;
  /** A file is large when its size is over this many bytes (strictly). */
  readonly thresholdBytes: number;
  /**
   * The raw history may hold `.hg` folders (default): false for the converted origins, whose
   * converters leave them out, so their rewrite skips the scan.
   */
  readonly mayHoldHg?: boolean;
}

export interface RewriteResult {
  /** False when nothing was written to outDir: the raw history is what is published. */
  readonly rewritten: boolean;
  /** Identities changed (author mappings that differed from the origin). */
  readonly mappedAuthors: number;
  /** Large files handled by the LFS choice (0 when the choice is `none` or nothing is large). */
  readonly largeFiles: readonly LargeFile[];
  /** The default branch (from the raw HEAD), e.g. `main`. */
  readonly defaultBranch: string;
  /** Raw commit → the commit written for it; null when every id was kept (`rewritten` false). */
  readonly commitMap: ReadonlyMap<string, string> | null;
  /** The paths left out (`history-drop.ts`): `{commit, path, reason}`, each path once. */
  readonly unstorablePaths: readonly FindingEntry[];
}

/** Blob id → size of every blob over the threshold, from one pass over the object store. */
export const scanLargeBlobs = (
  repoDir: string,
  thresholdBytes: number,
  job: GitJob,
): Promise<Map<string, number>> => blobSizes(repoDir, job, (bytes) => bytes > thresholdBytes);

/** The branch the repository's HEAD names (`main` when HEAD is detached). */
export async function defaultBranchOf(repoDir: string): Promise<string> {
  return (await headBranch(repoDir)) ?? 'main';
}

/** Branches and tags: `refs/heads/*`, `refs/tags/*` → the object each names (tag objects for annotated tags). */
export async function branchesAndTags(repoDir: string, job: GitJob): Promise<Map<string, string>> {
  const out = await runGit(
    ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/tags/'],
    local(repoDir, job),
  );
  const refs = new Map<string, string>();
  for (const line of out.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

/**
 * Files over the threshold anywhere in the history of a branch or tag, each blob/path pair once.
 * `oid` is the git blob id (40 hex): it names the file in the imported history and costs nothing
 * to know, while the SHA-256 LFS oid would mean reading every large file before the user chose;
 * GitHub's example (32 hex) matches neither, so clients cannot rely on its form. `refName` is a ref
 * whose history holds the file, the default branch when it does.
 *
 * The object scan costs about as much as reading the pack index; history is only walked when some
 * blob is over the threshold.
 */
export async function findLargeFiles(
  rawDir: string,
  thresholdBytes: number,
  job: GitJob,
): Promise<LargeFile[]> {
  try {
    return await largeFilesIn(rawDir, thresholdBytes, job);
  } catch (error) {
    throw stepFailure(error, 'Looking for large files', hiddenPaths(job, rawDir));
  }
}

async function largeFilesIn(rawDir: string, thresholdBytes: number, job: GitJob): Promise<LargeFile[]> {
  const large = await scanLargeBlobs(rawDir, thresholdBytes, job);
  if (large.size === 0) return [];
  const refs = [...(await branchesAndTags(rawDir, job)).keys()];
  if (refs.length === 0) return [];
  const defaultRef = `refs/heads/${await defaultBranchOf(rawDir)}`;
  const ordered = refs.includes(defaultRef)
    ? [defaultRef, ...refs.filter((ref) => ref !== defaultRef)]
    : refs;
  const out = await runGit(
    [
      'log',
      '-z',
      '--stdin',
      '--source',
      '--raw',
      '--no-abbrev',
      '--no-renames',
      '-m',
      '--format=%x01%H %S',
      ...[...large.keys()].map((oid) => `--find-object=${oid}`),
    ],
    { ...local(rawDir, job), input: `${ordered.join('\n')}\n`, maxStdoutBytes: 1024 * 1024 * 1024 },
  );
  const found = new Map<string, { commit: string; source: string; path: string; oid: string }>();
  for (const record of out.toString('utf8').split('\x01')) {
    const headerEnd = record.indexOf('\0');
    if (headerEnd < 0) continue;
    const [commit = '', source = ''] = record.slice(0, headerEnd).split(' ');
    const tokens = record
      .slice(headerEnd + 1)
      .replace(/^\n/, '')
      .split('\0');
    for (let i = 0; i + 1 < tokens.length; i += 2) {
      const newOid = (tokens[i] ?? '').split(' ')[3] ?? '';
      const path = tokens[i + 1] ?? '';
      const key = `${newOid}\0${path}`;
      if (large.has(newOid) && !found.has(key)) found.set(key, { commit, source, path, oid: newOid });
    }
  }
  const inDefault = new Map<string, boolean>();
  const files: LargeFile[] = [];
  for (const hit of found.values()) {
    let refName = hit.source;
    if (refName !== defaultRef && refs.includes(defaultRef)) {
      let ancestor = inDefault.get(hit.commit);
      if (ancestor === undefined) {
        ancestor = await isAncestor(rawDir, hit.commit, defaultRef, job);
        inDefault.set(hit.commit, ancestor);
      }
      if (ancestor) refName = defaultRef;
    }
    files.push({ refName, path: hit.path, oid: hit.oid, size: large.get(hit.oid) ?? 0 });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.oid < b.oid ? -1 : 1));
}

async function isAncestor(repoDir: string, commit: string, ref: string, job: GitJob): Promise<boolean> {
  try {
    await runGit(['merge-base', '--is-ancestor', commit, ref], local(repoDir, job));
    return true;
  } catch {
    return false;
  }
}

/**
 * Produces the bare repository `outDir` (replaced if present) from `rawDir`:
 * - nothing to change → `git clone --mirror` (hard links): every commit and tag id as in raw;
 * - mapped authors and/or `opt_out` → one `git filter-repo --source raw --target out` pass that
 *   maps author, committer and tagger identities (exact name and email pairs, any characters),
 *   strips blobs over the threshold, keeps messages byte for byte (no hash rewriting, no
 *   re-encoding), keeps commits that became empty, and writes no `refs/replace/*`;
 * - `opt_in` → `git lfs migrate import --everything --above=<threshold>` on that output (pointer
 *   files, `.gitattributes` as git-lfs writes it, objects in `outDir/lfs/objects`), then annotated
 *   tag messages restored where migrate changed them.
 * HEAD of outDir names the raw default branch.
 *
 * Fails (`OriginFailed`, the user's message) when the raw history does not pass `checkHistory`,
 * before anything is written, when a git call fails (`Rewriting the history failed (git …): <git's
 * words>`), or when outDir passes the limits: its bytes (Git and LFS objects)
 * are watched while the tools write and their process group is killed past `maxBytes`. outDir is
 * removed when the rewrite fails.
 */
export async function rewriteHistory(
  rawDir: string,
  outDir: string,
  options: RewriteOptions,
  job: GitJob,
): Promise<RewriteResult> {
  try {
    return await rewrite(rawDir, outDir, options, job);
  } catch (error) {
    throw stepFailure(error, 'Rewriting the history', hiddenPaths(job, rawDir, outDir));
  }
}

async function rewrite(
  rawDir: string,
  outDir: string,
  options: RewriteOptions,
  job: GitJob,
): Promise<RewriteResult> {
  const limits = importLimits(options);
  const dropped = await checkHistory(rawDir, job, true);
  // git's checks do not flag `.hg` (git stores it): looked for apart, unless the rewrite drops paths anyway.
  const dropping = dropped.any || (options.mayHoldHg !== false && (await holdsHgMetadata(rawDir, job)));
  const defaultBranch = await defaultBranchOf(rawDir);
  const mappings = changedIdentities(options.authors);
  const largeFiles = options.lfs === 'none' ? [] : await findLargeFiles(rawDir, options.thresholdBytes, job);
  const handleLarge = largeFiles.length > 0;
  await rm(outDir, { recursive: true, force: true });
  if (!dropping && mappings.length === 0 && !handleLarge) {
    // Nothing changes: the raw history is published as it is (its objects counted here, its size by the push).
    await checkObjects(rawDir, limits.maxObjects);
    return {
      rewritten: false,
      mappedAuthors: 0,
      largeFiles: [],
      defaultBranch,
      commitMap: null,
      unstorablePaths: [],
    };
  }
  const filtered = dropping || mappings.length > 0 || (handleLarge && options.lfs === 'opt_out');
  const dropList = join(job.home, 'dropped-paths.jsonl');
  await rm(dropList, { force: true });
  const renamed = renamedRawDir(outDir);
  await rm(renamed, { recursive: true, force: true });
  const marker = slashMarker();

  try {
    await withinSize(
      limits.maxBytes,
      () => directorySize(outDir),
      async (signal) => {
        const writing = { ...job, signal };
        if (filtered) {
          if (dropped.slashNamed.length > 0)
            await renameSlashNames(rawDir, renamed, dropped.slashNamed, marker, writing);
          await filterRepo(
            dropped.slashNamed.length > 0 ? renamed : rawDir,
            outDir,
            { changes: mappings, drop: dropping ? { listFile: dropList, marker } : undefined },
            handleLarge && options.lfs === 'opt_out' ? options.thresholdBytes : 0,
            writing,
          );
        } else {
          // Only Git LFS changes: git-lfs rewrites a hard-linked mirror.
          await runGit(['clone', '--mirror', '--quiet', rawDir, outDir], local(rawDir, writing));
        }
        if (handleLarge && options.lfs === 'opt_in')
          await migrateToLfs(outDir, options.thresholdBytes, writing, lfsObjectMap(outDir));
      },
    );
    await checkObjects(outDir, limits.maxObjects);
    // What was written holds none of the dropped entries: checked with no leniency for them.
    if (dropping) await checkHistory(outDir, job);
  } catch (error) {
    await rm(outDir, { recursive: true, force: true }); // nothing half-written or oversized is left to publish
    throw error;
  } finally {
    await rm(renamed, { recursive: true, force: true });
  }
  await pointHead(outDir, defaultBranch, local(outDir, job));
  const migrated = handleLarge && options.lfs === 'opt_in';
  const maps = [
    ...(filtered ? [{ path: join(outDir, 'filter-repo', 'commit-map'), csv: false }] : []),
    ...(migrated ? [{ path: lfsObjectMap(outDir), csv: true }] : []),
  ];
  return {
    rewritten: true,
    mappedAuthors: mappings.length,
    largeFiles: handleLarge ? largeFiles : [],
    defaultBranch,
    commitMap: maps.length > 0 ? await readCommitMaps(maps) : null,
    unstorablePaths: dropping ? await droppedPaths(dropList) : [],
  };
}

/** Where git-lfs writes the commits it changed (inside outDir: removed with it). */
const lfsObjectMap = (outDir: string) => join(outDir, 'lfs-object-map.csv');

interface IdentityChange {
  readonly from: { readonly name: string; readonly email: string };
  readonly to: { readonly name: string; readonly email: string };
}

function changedIdentities(authors: readonly AuthorMapping[]): IdentityChange[] {
  const changes: IdentityChange[] = [];
  for (const author of authors) {
    const from = splitGitRemoteId(author.remoteId);
    const to = { name: gitIdentityText(author.name), email: gitIdentityText(author.email) };
    if (!from || (from.name === to.name && from.email === to.email)) continue;
    changes.push({ from, to });
  }
  return changes;
}

/**
 * Python bodies for filter-repo's callbacks. The identities travel as base64 JSON inside the code
 * (nothing a name or email holds can end the string), are decoded once per run, and match exact
 * byte pairs: a mailmap file cannot hold `#` (a comment), `<`/`>` or edge whitespace, and filter-repo
 * compares mailmap emails case-insensitively, which would merge two distinct origin identities.
 */
function identityCallbacks(changes: readonly IdentityChange[]): { commit: string; tag: string } {
  const payload = Buffer.from(
    JSON.stringify(changes.map((c) => [c.from.name, c.from.email, c.to.name, c.to.email])),
  ).toString('base64');
  const load = [
    'import base64, json',
    'g = globals()',
    "m = g.get('_import_identity_map')",
    'if m is None:',
    `  m = {(a[0].encode(), a[1].encode()): (a[2].encode(), a[3].encode()) for a in json.loads(base64.b64decode(b'${payload}'))}`,
    "  g['_import_identity_map'] = m",
  ];
  return {
    commit: [
      ...load,
      'n = m.get((commit.author_name, commit.author_email))',
      'if n is not None:',
      '  commit.author_name, commit.author_email = n',
      'n = m.get((commit.committer_name, commit.committer_email))',
      'if n is not None:',
      '  commit.committer_name, commit.committer_email = n',
    ].join('\n'),
    tag: [
      ...load,
      'n = m.get((tag.tagger_name, tag.tagger_email)) if tag.tagger_name is not None else None',
      'if n is not None:',
      '  tag.tagger_name, tag.tagger_email = n',
    ].join('\n'),
  };
}

async function filterRepo(
  rawDir: string,
  outDir: string,
  {
    changes,
    drop,
  }: { changes: readonly IdentityChange[]; drop: { listFile: string; marker: string } | undefined },
  stripAboveBytes: number,
  job: GitJob,
): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await runGit(['init', '--bare', '--quiet', outDir], local(outDir, job));
  const args = [
    'filter-repo',
    '--source',
    rawDir,
    '--target',
    outDir,
    '--force',
    '--quiet',
    '--replace-refs',
    'delete-no-add',
    '--prune-empty',
    'never',
    '--prune-degenerate',
    'never',
    '--preserve-commit-hashes',
    '--preserve-commit-encoding',
  ];
  const scratch = await mkdtemp(join(job.home, 'filter-'));
  try {
    const callbacks = changes.length > 0 ? identityCallbacks(changes) : undefined;
    const commit = [callbacks?.commit, drop && dropCallback(drop.listFile, drop.marker)];
    if (commit.some(Boolean)) {
      const commitFile = join(scratch, 'commit-callback.py');
      await writeFile(commitFile, commit.filter(Boolean).join('\n'));
      args.push('--commit-callback', commitFile);
    }
    if (callbacks) {
      const tagFile = join(scratch, 'tag-callback.py');
      await writeFile(tagFile, callbacks.tag);
      args.push('--tag-callback', tagFile);
    }
    if (stripAboveBytes > 0) args.push('--strip-blobs-bigger-than', String(stripAboveBytes));
    await runGit(args, { ...local(outDir, job), env: FAST_IMPORT_MALLOC });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * glibc hands freed heap back after every blob and fast-import then spends most of its time in
 * `brk` (measured: 45 s of CPU instead of 3.4 s for 10,000 commits of 10 KB); these keep it.
 */
export const FAST_IMPORT_MALLOC = {
  MALLOC_TOP_PAD_: String(128 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(256 * 1024 * 1024),
};

/** The repository the push step publishes: the rewritten one, or the raw history when nothing was rewritten. */
export const publishedHistory = (rawDir: string, outDir: string, rewritten: boolean): string =>
  rewritten ? outDir : rawDir;
