/**
 * The end of a conversion: what only the converted history can tell (issue 18's import report),
 * read from svn-all-fast-export's log (kept for a sync to resume from), then the refs of what
 * Subversion deleted kept as tags or dropped, as the owner chose.
 *
 * - `svn_mergeinfo`: each change the history scan listed (`history-findings.ts`), `merged` when
 *   the commit svn-all-fast-export made for that revision on that path's branch has a merge
 *   parent (its log marks such commits `# merge from`).
 * - `kept_deleted_refs`: each branch or tag deleted (or replaced) in Subversion, and the tag
 *   `backups/<name>@<revision>` it is kept as, or `ref: null` when the owner chose not to keep them.
 * - `empty_directories`: each directory that is empty at the youngest revision in a branch or tag
 *   (`empty-dirs.ts`), `kept` when the ref's tree has it (a placeholder `.gitignore` when the owner
 *   chose to keep them, or the `.gitignore` made from its `svn:ignore`).
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FindingEntry } from '#domain/import-report';
import { saveFinding } from '../findings.ts';
import { runGit } from '../git-command.ts';
import { rawRepositoryPath } from '../origin.ts';
import { emptyDirectories } from './empty-dirs.ts';
import { PENDING_MERGEINFO } from './history-findings.ts';
import type { SvnRefs } from './rules.ts';

export interface Finish {
  readonly workDir: string;
  readonly mirror: string;
  readonly home: string;
  /** The imported project's path in the repository, no slashes around. */
  readonly path: string;
  readonly refs: SvnRefs;
  /** Whether the project has the standard layout (trunk, branches, tags). */
  readonly standard: boolean;
  /** svn-all-fast-export's log of this conversion (`log-raw.git`). */
  readonly log: string;
  readonly keepDeletedRefs: boolean;
}

/** Saves the findings of the converted history (again at each finish, from the whole log). */
export async function saveConversionFindings(finish: Finish): Promise<void> {
  let log: string;
  try {
    log = await readFile(finish.log, 'utf8');
  } catch {
    return; // an attempt from before the log was kept, which removed it after saving
  }
  await saveMergeinfo(finish, log);
  await saveFinding(finish.workDir, 'kept_deleted_refs', await deletedRefs(finish));
  await saveFinding(finish.workDir, 'empty_directories', await emptyDirectories(finish));
}

const gitLocal = (repo: string, home: string, args: readonly string[], input?: string) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000, input });

const projectRelative = (finish: Finish, shown: string) => {
  const path = shown.replace(/^\/+/, '');
  if (finish.path === '') return path;
  return path === finish.path ? '' : path.slice(finish.path.length + 1);
};

async function saveMergeinfo(finish: Finish, log: string): Promise<void> {
  const merges = new Set<string>();
  for (const match of log.matchAll(/^progress SVN r(\d+) branch (.+) = :\d+ # merge from/gm))
    merges.add(`${match[1]} ${match[2]}`);
  let pending: { count: number; listed: FindingEntry[] };
  try {
    pending = JSON.parse(await readFile(join(finish.workDir, PENDING_MERGEINFO), 'utf8'));
  } catch {
    return;
  }
  const listed = pending.listed.map((entry) => {
    const place = finish.refs.locate(projectRelative(finish, String(entry.path)));
    return { ...entry, merged: place !== undefined && merges.has(`${entry.revision} ${place.branch}`) };
  });
  await saveFinding(finish.workDir, 'svn_mergeinfo', listed, pending.count);
}

/** A ref svn-all-fast-export kept for a deleted or replaced branch or tag. */
interface Backup {
  readonly ref: string;
  readonly oid: string;
  readonly kind: 'branch' | 'tag';
  /** Its Git name (as a branch or tag) and the revision that deleted or replaced it. */
  readonly name: string;
  readonly revision: number;
}

/**
 * svn-all-fast-export keeps a deleted branch as the tag `backups/<name>@<rev>`, but a deleted tag
 * (or a branch replaced in place) as `refs/backups/r<rev>/tags/<name>`, which is neither a branch
 * nor a tag and would never be published.
 */
async function backups(gitRepo: string, home: string): Promise<Backup[]> {
  const lines = (
    await gitLocal(gitRepo, home, [
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/backups/',
      'refs/tags/backups/',
    ])
  )
    .toString()
    .split('\n')
    .filter(Boolean);
  return lines.flatMap((line): Backup[] => {
    const [ref = '', oid = ''] = line.split(' ');
    const moved = /^refs\/backups\/r(\d+)\/(heads|tags)\/(.+)$/.exec(ref);
    if (moved)
      return [
        {
          ref,
          oid,
          kind: moved[2] === 'tags' ? 'tag' : 'branch',
          name: moved[3] ?? '',
          revision: Number(moved[1]),
        },
      ];
    const tagged = /^refs\/tags\/backups\/(.+)@(\d+)$/.exec(ref);
    return tagged ? [{ ref, oid, kind: 'branch', name: tagged[1] ?? '', revision: Number(tagged[2]) }] : [];
  });
}

/**
 * Every branch or tag deleted so far, by name and revision: `settleDeletedRefs` renames or drops
 * their refs, so a sync, which converts only new revisions, lists the earlier ones from here.
 */
const DELETED_REFS_FILE = 'svn-deleted-refs.json';

type Deleted = Pick<Backup, 'kind' | 'name' | 'revision'>;

/** Forgets the deleted refs (the conversion starts again). */
export const forgetDeletedRefs = (workDir: string): Promise<void> =>
  rm(join(workDir, DELETED_REFS_FILE), { force: true });

async function deletedRefs(finish: Finish): Promise<FindingEntry[]> {
  const file = join(finish.workDir, DELETED_REFS_FILE);
  const known = JSON.parse(await readFile(file, 'utf8').catch(() => '[]')) as Deleted[];
  const key = (deleted: Deleted) => `${deleted.name}@${deleted.revision}`;
  const seen = new Set(known.map(key));
  // A settled ref of an earlier conversion is known: as a kept tag it no longer says its kind.
  const fresh = (await backups(rawRepositoryPath(finish.workDir), finish.home))
    .filter((backup) => !seen.has(key(backup)))
    .map(({ kind, name, revision }) => ({ kind, name, revision }));
  const found = [...known, ...fresh];
  await writeFile(file, JSON.stringify(found));
  return found
    .sort((a, b) => a.revision - b.revision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((backup) => ({
      kind: backup.kind,
      origin_name: finish.refs.originName(backup.kind, backup.name),
      ref: finish.keepDeletedRefs ? `refs/tags/backups/${backup.name}@${backup.revision}` : null,
      revision: backup.revision,
      kept: finish.keepDeletedRefs,
    }));
}

/**
 * Every ref of something deleted becomes the tag `backups/<name>@<rev>` (one rule for all), or
 * goes when the owner chose not to keep them. Safe to run again.
 */
export async function settleDeletedRefs(gitRepo: string, home: string, keep: boolean): Promise<void> {
  const moves = (await backups(gitRepo, home)).flatMap((backup) => {
    const tag = `refs/tags/backups/${backup.name}@${backup.revision}`;
    if (!keep) return [`delete ${backup.ref} ${backup.oid}`];
    return backup.ref === tag ? [] : [`create ${tag} ${backup.oid}`, `delete ${backup.ref} ${backup.oid}`];
  });
  if (moves.length === 0) return;
  await gitLocal(gitRepo, home, ['update-ref', '--stdin'], `${moves.join('\n')}\n`);
}
