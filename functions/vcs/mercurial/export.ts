/**
 * Mercurial → Git conversion of a local repository (`raw.hg`) into a bare Git repository, in
 * revision ranges that can be resumed: the conversion program (`export-program.ts`) writes a
 * `git fast-import` stream, piped into `git fast-import`. Commit marks are `:<rev + 1>` and persist
 * in a marks file only when a range succeeded, so a range killed by its time limit is simply
 * converted again; hg revision numbers of a repository that is only ever pulled into never change.
 *
 * Why not git-remote-hg: it re-clones the repository into the Git directory, diffs manifests in
 * Python and cannot stop and resume; measured 15.5 s for 2,000 changesets against 2.6 s here.
 *
 * Authors are `name <email>`; a user without an email gets a made-up valid one (`hgUserIdentity`
 * in `authors.ts` computes the same), so no rewrite is needed for it. Refs: `refs.ts`.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runBounded } from '#vcs/bounded-process';
import { GitFailed, gitEnvironment, runGit } from '#vcs/git-command';
import { checkArrivedPacks, checkedSoFar, packNames } from './arrival.ts';
import { hgEnvironment, runHg } from './command.ts';
import { HG_EXPORT_PROGRAM } from './export-program.ts';

/**
 * The pipeline, in bash for `pipefail`: one process group, so a time limit kills both sides.
 * fast-import compresses at level 1 (zlib is most of its time; the pack is hardly larger) and
 * always writes a pack, never loose objects (`arrival.ts` checks each pack); glibc keeps a heap pad (without it fast-import spends half its time growing and trimming the
 * heap: 13.7 s → 4.5 s measured).
 */
const PIPELINE =
  'set -o pipefail; "$1" -c "$2" "$3" "$4" "$5" "$6" "$7" "$8" | git -c pack.compression=1 -c fastimport.unpackLimit=0 -c core.hooksPath=/dev/null fast-import --quiet --done --force --import-marks-if-exists="$9" --export-marks="$9.new"';

export interface HgExportRun {
  readonly hgRepo: string;
  readonly gitRepo: string;
  readonly home: string;
  readonly timeoutMs: number;
  /** The domain of made-up emails for users without one (see `hgUserIdentity`). */
  readonly emailDomain: string;
  /** Revisions converted so far in this range (from the program's `converted a/b` lines). */
  readonly onConverted?: (revisions: number) => void;
}

let python: Promise<string> | undefined;
/** The Python that runs `hg` (its library is importable only there). */
export function hgPython(home: string): Promise<string> {
  python ??= runHg(['debuginstall', '-T', '{pythonexe}'], { cwd: home, home, timeoutMs: 30_000 }).then(
    (out) => out.toString('utf8').trim() || 'python3',
    (error: unknown) => {
      python = undefined;
      throw error;
    },
  );
  return python;
}

export const marksFile = (gitRepo: string) => join(gitRepo, 'hg-marks');

/** The paths left out so far, one JSON line each (`export-program.ts`). */
export const droppedFile = (gitRepo: string) => join(gitRepo, 'hg-dropped.jsonl');

async function pipeline(
  run: HgExportRun,
  args: readonly [string, string, string, string, string],
): Promise<void> {
  const marks = marksFile(run.gitRepo);
  const dropped = droppedFile(run.gitRepo);
  // A killed run leaves a half-written pack, marks and dropped file; none is used.
  await rm(`${marks}.new`, { force: true });
  await rm(`${dropped}.new`, { force: true });
  const packs = join(run.gitRepo, 'objects', 'pack');
  for (const name of await readdir(packs).catch(() => [] as string[]))
    if (name.startsWith('tmp_')) await rm(join(packs, name), { force: true });
  await runBounded(
    'bash',
    ['-c', PIPELINE, 'hg-export', await hgPython(run.home), HG_EXPORT_PROGRAM, ...args, dropped, marks],
    {
      cwd: run.gitRepo,
      env: {
        ...gitEnvironment(run.home, 'local'),
        ...hgEnvironment(run.home),
        GIT_DIR: run.gitRepo,
        MALLOC_TOP_PAD_: String(64 * 1024 * 1024),
      },
      timeoutMs: run.timeoutMs,
      onProgress: (line) => {
        const match = /^converted (\d+)\/\d+$/.exec(line.trim());
        if (match) run.onConverted?.(Number(match[1]));
      },
    },
    (code, stderr, timedOut) => new GitFailed(['fast-import'], code, stderr, timedOut),
  );
  // The dropped paths first: a crash between the two renames converts the range again, and a
  // path listed twice is listed once (`unstorable-paths.ts`).
  await rename(`${dropped}.new`, dropped);
  await rename(`${marks}.new`, marks);
}

/** Creates the bare repository, or leaves the one there as it is. */
export const initBare = (run: HgExportRun) =>
  runGit(['init', '--bare', '--quiet', '--template=', run.gitRepo], {
    cwd: run.home,
    home: run.home,
    transport: 'local',
    timeoutMs: 30_000,
  });

/** Converts revisions `from` … `to − 1` of `hgRepo` (their parents converted before) into `gitRepo`. */
export async function exportHgRevisions(run: HgExportRun, from: number, to: number): Promise<void> {
  if (to <= from) return;
  await initBare(run);
  const earlier = await checkedSoFar(run.gitRepo, from === 0);
  const before = await packNames(run.gitRepo);
  await pipeline(run, [run.hgRepo, 'commits', String(from), String(to), run.emailDomain]);
  await checkArrivedPacks(run, before, earlier);
}
