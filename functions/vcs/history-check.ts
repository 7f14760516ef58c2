/**
 * Git's own object checks on an imported history, as `transfer.fsckObjects` makes a fetch or push
 * run them: `git fsck --strict`, so what git only warns about by default (a tree entry `..` or
 * `.git` in any case, with HFS and NTFS lookalikes such as `.git\u200c` and `git~1`, malformed
 * identities; not zero-padded modes: `fsck-policy.ts`) fails the import as it would fail a push.
 * The first object git names is told to the user as the origin commit and path that hold it.
 * A raw repository whose every object git already checked as it arrived (`arrival-check.ts`) is
 * not checked a second time.
 *
 * A conversion's raw history (Subversion, Mercurial, TFVC) is checked by this pass, and a sync
 * adds to it: after a pass found it clean, its tips are kept in the repository (`CHECKED_TIPS`),
 * and the next pass packs only the objects those tips do not reach and has `git index-pack
 * --strict` check them, links to the checked objects included (a scratch repository borrowing the
 * raw one's objects). Its cost grows with what the sync added, not with the history. Anything it
 * does not find clean, or cannot run, is checked whole as before, so the user reads the same words.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDotGitName } from '#domain/unstorable-paths';
import { CHECKED_ON_ARRIVAL } from './arrival-check.ts';
import { DROPPED_IN_HISTORY, fsckLeniency } from './fsck-policy.ts';
import { GitFailed, runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';
import { gitWords, hiddenPaths } from './git-words.ts';
import { OriginFailed } from './origin.ts';
import { readTips, refTips, tipsText } from './seen-history.ts';

/** `error in tree <oid>: hasDotgit: contains '.git'`, as `git fsck` prints each finding. */
const FINDING = /^error in (commit|tree|blob|tag) ([0-9a-f]{40,64}): (\w+): (.*)$/m;

/** The entries the history step drops (`DROPPED_IN_HISTORY`) that the check warned of. */
export interface DroppedEntries {
  /** Whether any tree holds one. */
  readonly any: boolean;
  /** The trees holding an entry whose name holds a `/` (`fullPathname`: `renameSlashNames`). */
  readonly slashNamed: readonly string[];
}

const NONE: DroppedEntries = { any: false, slashNamed: [] };
const WARNING = new RegExp(`^warning in tree ([0-9a-f]+): (${DROPPED_IN_HISTORY.join('|')}): `);

/**
 * Fails with the user's message when `git fsck --strict` finds anything in `repoDir`. With
 * `dropping` (the raw history's pass), the entries the history step drops (`DROPPED_IN_HISTORY`)
 * are only warned of, the answer says which were found, and a pass after a clean one reads only
 * the objects added since (see the module comment).
 */
export async function checkHistory(repoDir: string, job: GitJob, dropping = false): Promise<DroppedEntries> {
  if (
    await stat(join(repoDir, CHECKED_ON_ARRIVAL)).then(
      (marker) => marker.isFile(),
      () => false,
    )
  )
    return NONE;
  // Only the raw history's pass (`dropping`) keeps its tips: the rewritten one is made afresh.
  if (!dropping) return wholeCheck(repoDir, job, dropping);
  const tips = await refTips(repoDir, job);
  const checked = await readTips(join(repoDir, CHECKED_TIPS));
  const found =
    checked !== undefined && (await addedObjectsClean(repoDir, job, tips, checked))
      ? NONE
      : await wholeCheck(repoDir, job, dropping);
  // A history with entries the rewrite drops is filtered whole, every time: no tips kept for it.
  if (found.any) await rm(join(repoDir, CHECKED_TIPS), { force: true });
  else await writeFile(join(repoDir, CHECKED_TIPS), tipsText(tips));
  return found;
}

/** The tips of the raw history's last clean pass (see the module comment). */
export const CHECKED_TIPS = 'import-checked-tips';

/**
 * Whether the objects `tips` reach and `checked` do not pass `git index-pack --strict` without a
 * word; false too when the pass cannot run (a checked tip gone, no room in /tmp): the caller then
 * checks the whole history. The scratch repository is in /tmp, which is the function's own (git
 * trusts a repository only its owner made); the pack is held in memory (at most `runGit`'s
 * output bound: a larger one is checked whole).
 */
async function addedObjectsClean(
  repoDir: string,
  job: GitJob,
  tips: readonly string[],
  checked: readonly string[],
): Promise<boolean> {
  const seen = new Set(checked);
  if (tips.every((tip) => seen.has(tip))) return true;
  const scratch = await mkdtemp(join(tmpdir(), 'checked-objects-'));
  try {
    await runGit(['init', '--bare', '--quiet', scratch], local(scratch, job));
    await writeFile(join(scratch, 'objects', 'info', 'alternates'), `${resolve(repoDir, 'objects')}\n`);
    // Through memory, not a file: git writes a pack file beside the objects and renames it into
    // place, and EFS and /tmp are two devices. No delta search (`--window=0`): it is read once.
    const pack = await runGit(['pack-objects', '--revs', '--quiet', '--window=0', '--stdout'], {
      ...local(repoDir, job),
      input: `${[...tips, '--not', ...checked].join('\n')}\n`,
    });
    let warned = false;
    const lenient = fsckLeniency('fsck').map(([key, value]) => `${key.slice('fsck.'.length)}=${value}`);
    await runGit(['index-pack', '--stdin', `--strict=${lenient.join(',')}`], {
      ...local(scratch, job),
      input: pack,
      onProgress: (line) => {
        if (/^(warning|error)\b/.test(line)) warned = true;
      },
    });
    return !warned;
  } catch {
    return false;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function wholeCheck(repoDir: string, job: GitJob, dropping: boolean): Promise<DroppedEntries> {
  try {
    const warned = dropping ? DROPPED_IN_HISTORY.map((id) => [`fsck.${id}`, 'warn'] as const) : [];
    const leniency = [...fsckLeniency('fsck'), ...warned].flatMap(([key, value]) => [
      '-c',
      `${key}=${value}`,
    ]);
    let any = false;
    const slashNamed = new Set<string>();
    await runGit([...leniency, 'fsck', '--strict', '--no-dangling', '--no-reflogs', '--no-progress'], {
      ...local(repoDir, job),
      onProgress: (line) => {
        const warning = WARNING.exec(line);
        if (!warning) return;
        any = true;
        if (warning[2] === 'fullPathname') slashNamed.add(warning[1] ?? '');
      },
    });
    return { any, slashNamed: [...slashNamed] };
  } catch (error) {
    if (!(error instanceof GitFailed) || error.timedOut) throw error;
    const finding = FINDING.exec(error.stderr);
    if (!finding)
      throw new OriginFailed(
        `The history does not pass Git's object checks: ${gitWords(`${error.stdout.replace(/\n\s+to\s+/g, ' to ')}\n${error.stderr}`, hiddenPaths(job, repoDir)) || `git fsck exited with ${error.exitCode}`}`,
        { cause: error },
      );
    const [, type = '', oid = '', id = '', detail = ''] = finding;
    throw new OriginFailed(await describe(repoDir, job, type, oid, `${id}: ${detail}`), { cause: error });
  }
}

/** Where the user finds what git refused: the commit and path holding the object. */
async function describe(
  repoDir: string,
  job: GitJob,
  type: string,
  oid: string,
  finding: string,
): Promise<string> {
  if (type === 'commit') return `Git refuses commit ${oid} of the history (${finding})`;
  if (type === 'tag') return `Git refuses the annotated tag ${oid} of the history (${finding})`;
  const place = await locate(repoDir, job, type, oid);
  if (!place) return `Git refuses the ${type} ${oid} of the history (${finding})`;
  const entry = type === 'tree' ? await flaggedEntry(repoDir, job, oid, finding) : undefined;
  const path = [place.path, entry].filter((part) => part !== undefined && part !== '').join('/');
  return path === ''
    ? `Commit ${place.commit} has a root directory Git refuses (${finding})`
    : `Commit ${place.commit} has a path Git refuses: ${JSON.stringify(path)} (${finding})`;
}

/** The oldest commit whose tree holds the object, and its path there ('' for a root tree). */
async function locate(
  repoDir: string,
  job: GitJob,
  type: string,
  oid: string,
): Promise<{ commit: string; path: string } | undefined> {
  if (type === 'tree') {
    const roots = await runGit(['log', '--all', '--reverse', '--format=%H %T'], {
      ...local(repoDir, job),
      maxStdoutBytes: 1024 * 1024 * 1024,
    });
    for (const line of roots.toString('utf8').split('\n')) {
      const [commit, tree] = line.split(' ');
      if (commit && tree === oid) return { commit, path: '' };
    }
  }
  const log = await runGit(
    [
      'log',
      '--all',
      '--reverse',
      '-z',
      '-t',
      '-m',
      '--raw',
      '--no-abbrev',
      '--no-renames',
      '--format=%x01%H',
      `--find-object=${oid}`,
    ],
    { ...local(repoDir, job), maxStdoutBytes: 1024 * 1024 * 1024 },
  );
  for (const record of log.toString('utf8').split('\x01')) {
    const headerEnd = record.indexOf('\0');
    if (headerEnd < 0) continue;
    const tokens = record
      .slice(headerEnd + 1)
      .replace(/^\n/, '')
      .split('\0');
    for (let i = 0; i + 1 < tokens.length; i += 2) {
      if ((tokens[i] ?? '').split(' ')[3] === oid)
        return { commit: record.slice(0, headerEnd).trim(), path: tokens[i + 1] ?? '' };
    }
  }
  return undefined;
}

/** Names git's checks refuse, by the finding's id (others name the tree itself). */
const REFUSED: Readonly<Record<string, (name: string) => boolean>> = {
  hasDot: (name) => name === '.',
  hasDotdot: (name) => name === '..',
  hasDotgit: isDotGitName,
  emptyName: (name) => name === '',
  fullPathname: (name) => name.includes('/'),
};

/** The entry of `tree` that the finding is about, when its id says which. */
async function flaggedEntry(
  repoDir: string,
  job: GitJob,
  tree: string,
  finding: string,
): Promise<string | undefined> {
  const refused = REFUSED[finding.slice(0, finding.indexOf(':'))];
  if (!refused) return undefined;
  const listing = await runGit(['ls-tree', '-z', tree], local(repoDir, job));
  for (const entry of listing.toString('utf8').split('\0')) {
    const name = entry.slice(entry.indexOf('\t') + 1);
    if (entry.includes('\t') && refused(name)) return name;
  }
  return undefined;
}
