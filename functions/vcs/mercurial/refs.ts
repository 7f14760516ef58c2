/**
 * The Git refs of a converted Mercurial history (written once, after the last range): the
 * `default` branch is `main` (unless a bookmark is named `main`, then `branches/default`), every
 * other named branch `branches/<name>`, every other head of a branch (closed ones too)
 * `hg/<branch>/<12 hex>` (so no changeset is lost), every bookmark its own name, every tag a
 * lightweight tag. A name Git refuses, or one that clashes with a ref taken before it, is renamed
 * by the one scheme of `#domain/ref-names` (readable form plus a hash suffix). The refs, and what
 * the conversion program lists besides them, go to the job's findings (`findings.ts`).
 */
import { type AssignedRef, assignRefNames, type RefRequest } from '#domain/ref-names';
import type { RevisionEntry } from '#domain/revision-map';
import { runBounded } from '#vcs/bounded-process';
import { GitFailed, runGit } from '#vcs/git-command';
import { OriginFailed } from '#vcs/origin';
import { readMarks, writeOriginRevisions } from '#vcs/revision-map';
import { hgEnvironment, runHg } from './command.ts';
import { type HgExportRun, hgPython, initBare, marksFile } from './export.ts';
import { HG_EXPORT_PROGRAM } from './export-program.ts';
import { dropStaleRefs } from './stale-refs.ts';
import { hideLocalPaths } from './words.ts';

/** A ref the conversion program found: a branch's tip, another head of it, a bookmark or a tag. */
export interface HgRefEntry {
  readonly kind: 'branch' | 'head' | 'bookmark' | 'tag';
  readonly name: string;
  /** The head's short changeset id (`head` only). */
  readonly node?: string;
  /** The fast-import mark of its commit (revision + 1). */
  readonly mark: number;
  /** Every head of the branch is closed (`branch` only). */
  readonly closed?: boolean;
}

export type HgRefRequest = RefRequest<HgRefEntry['kind']> & {
  readonly mark: number;
  readonly closed?: boolean;
};

/** What the conversion program lists besides the refs: the job's findings (`findings.ts`). */
export interface HgListing {
  readonly refs: readonly HgRefEntry[];
  /** Every head of every branch (closed ones too), full ids: each changeset is an ancestor of one. */
  readonly heads: readonly string[];
  readonly subrepos: readonly HgSubrepo[];
  readonly authorless: { readonly count: number; readonly listed: readonly HgAuthorless[] };
}

/** A subrepository of a changeset a ref points at; all null but `path` when `.hgsub` is unreadable. */
export interface HgSubrepo {
  readonly path: string;
  readonly source: string | null;
  readonly revision: string | null;
  readonly kind: string | null;
  readonly changeset: string;
}

/** A changeset without an author, and the Git identity it got. */
export interface HgAuthorless {
  readonly changeset: string;
  readonly user: string;
  readonly author: string;
}

/** The refs written, and what the program listed besides them. */
export interface HgRefsResult {
  readonly assigned: readonly AssignedRef<HgRefRequest>[];
  readonly heads: HgListing['heads'];
  readonly subrepos: HgListing['subrepos'];
  readonly authorless: HgListing['authorless'];
}

const byName = (a: HgRefEntry, b: HgRefEntry) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : (a.node ?? '') < (b.node ?? '') ? -1 : 1;

/**
 * The refs the module comment names, in the order that decides who keeps a readable name two ask
 * for (the default branch, branch tips, bookmarks, other heads, tags; each sorted by name), made
 * unique and valid by `assignRefNames`.
 */
export function hgRefNames(entries: readonly HgRefEntry[]): AssignedRef<HgRefRequest>[] {
  const of = (kind: HgRefEntry['kind']) => entries.filter((entry) => entry.kind === kind).sort(byName);
  const mainTaken = entries.some((entry) => entry.kind === 'bookmark' && entry.name === 'main');
  const branches = of('branch');
  const main = mainTaken ? undefined : branches.find((entry) => entry.name === 'default');
  const request = (entry: HgRefEntry, prefix: string, path = entry.name): HgRefRequest => ({
    kind: entry.kind,
    name: entry.name,
    prefix,
    path,
    mark: entry.mark,
    ...(entry.closed === undefined ? {} : { closed: entry.closed }),
  });
  const requests = [
    ...(main ? [request(main, 'refs/heads/', 'main')] : []),
    ...branches.filter((entry) => entry !== main).map((entry) => request(entry, 'refs/heads/branches/')),
    ...of('bookmark').map((entry) => request(entry, 'refs/heads/')),
    ...of('head').map((entry) => request(entry, 'refs/heads/hg/', `${entry.name}/${entry.node ?? ''}`)),
    ...of('tag').map((entry) => request(entry, 'refs/tags/')),
  ];
  return assignRefNames(requests);
}

/** git's own words, without the service's paths (the user sees the origin's problem, not our disk). */
const gitWords = (error: GitFailed) =>
  hideLocalPaths(
    error.stderr
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^(?:error|fatal):/.test(line))
      .at(0) ?? `git exited with ${error.exitCode}`,
  ).slice(0, 300);

/**
 * Writes the branch, bookmark and tag refs (see the module comment and `hgRefNames`) in place of
 * any there before, and HEAD; returns the refs written and what the program found besides
 * (at most `maxListed` changesets without an author are listed, all are counted).
 */
export async function exportHgRefs(run: HgExportRun, maxListed: number): Promise<HgRefsResult> {
  await initBare(run); // an empty origin converts no range
  const listing = await runBounded(
    await hgPython(run.home),
    ['-c', HG_EXPORT_PROGRAM, run.hgRepo, 'refs', run.emailDomain, String(maxListed)],
    { cwd: run.gitRepo, env: hgEnvironment(run.home), timeoutMs: run.timeoutMs },
    (code, stderr, timedOut) => new GitFailed(['hg-export', 'refs'], code, stderr, timedOut),
  );
  const found = JSON.parse(listing.toString('utf8')) as HgListing;
  const assigned = hgRefNames(found.refs);
  const local = (args: readonly string[], input?: string) =>
    runGit(args, { cwd: run.gitRepo, home: run.home, transport: 'local', timeoutMs: run.timeoutMs, input });
  await dropStaleRefs(local, new Set(assigned.map((entry) => entry.ref)));
  const stream = assigned.map((entry) => `reset ${entry.ref}\nfrom :${entry.mark}\n\n`).join('');
  try {
    await local(
      ['fast-import', '--quiet', '--done', '--force', `--import-marks-if-exists=${marksFile(run.gitRepo)}`],
      `${stream}done\n`,
    );
  } catch (error) {
    if (!(error instanceof GitFailed) || error.timedOut) throw error;
    throw new OriginFailed(
      `Writing the Git refs of the Mercurial branches, bookmarks and tags failed: ${gitWords(error)}`,
      { cause: error },
    );
  }
  await local(['update-ref', '-d', 'refs/hg/convert']).catch(() => undefined);
  const heads = (await local(['for-each-ref', '--format=%(refname)', 'refs/heads/']))
    .toString()
    .split('\n')
    .filter((line) => line !== '');
  const head = heads.includes('refs/heads/main') ? 'refs/heads/main' : heads[0];
  if (head) await local(['symbolic-ref', 'HEAD', head]);
  // The marks stay: a sync converts only the changesets after them (`reopen.ts`).
  await saveHgRevisions(run);
  return { assigned, heads: found.heads, subrepos: found.subrepos, authorless: found.authorless };
}

/**
 * The revision map's raw side (`vcs/revision-map.ts`): each changeset id in revision order, with
 * the commit its mark (`:<rev + 1>`) names; written while the marks are still there.
 */
async function saveHgRevisions(run: HgExportRun): Promise<void> {
  const marks = await readMarks(marksFile(run.gitRepo));
  const nodes = await runHg(['log', '-R', run.hgRepo, '-r', 'all()', '-T', '{rev} {node}\\n'], {
    cwd: run.home,
    home: run.home,
    timeoutMs: run.timeoutMs,
    maxStdoutBytes: 256 * 1024 * 1024,
  });
  const entries: RevisionEntry[] = [];
  for (const line of nodes.toString('utf8').split('\n')) {
    const [rev, node] = line.split(' ');
    const commit = rev === undefined ? undefined : marks.get(String(Number(rev) + 1));
    if (node && commit) entries.push({ originRevision: node, commit });
  }
  await writeOriginRevisions(run.gitRepo, entries);
}
