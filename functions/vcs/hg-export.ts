/**
 * Mercurial → Git conversion of a local repository (`raw.hg`) into a bare Git repository, in
 * revision ranges that can be resumed: a small Python program (it needs Mercurial's own library,
 * so it runs on the Python that runs `hg`) writes a `git fast-import` stream, piped into
 * `git fast-import`. Commit marks are `:<rev + 1>` and persist in a marks file only when a range
 * succeeded, so a range killed by its time limit is simply converted again; hg revision numbers of
 * a repository that is only ever pulled into never change.
 *
 * Why not git-remote-hg: it re-clones the repository into the Git directory, diffs manifests in
 * Python and cannot stop and resume; measured 15.5 s for 2,000 changesets against 2.6 s here.
 *
 * Refs (written once, after the last range): the `default` branch is `main` (unless a bookmark is
 * named `main`, then `branches/default`), every other named branch `branches/<name>`, every other
 * head of a branch (closed ones too) `hg/<branch>/<12 hex>` (so no changeset is lost), every
 * bookmark its own name, every tag a lightweight tag. A name Git refuses, or one that clashes with
 * a ref taken before it, is renamed by the one scheme of `#domain/ref-names` (readable form plus a
 * hash suffix); the renames are returned for the job's `renamed-refs.json`. Authors are `name <email>`; a user without an email gets a made-up
 * valid one (`hgUserIdentity` in mercurial.ts computes the same), so no rewrite is needed for it.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AssignedRef,
  assignRefNames,
  type RefRename,
  type RefRequest,
  refRenames,
} from '#domain/ref-names';
import { runBounded } from './bounded-process.ts';
import { GitFailed, gitEnvironment, runGit } from './git-command.ts';
import { hgEnvironment, runHg } from './hg-command.ts';
import { OriginFailed } from './origin.ts';

const PROGRAM = String.raw`
import json, re, sys
from mercurial import hg, ui as uimod, manifest as manifestmod, node as nodemod, pathutil

USER = re.compile(rb'^(.*?)\s*<([^>]*)>\s*$', re.S)

def clean(text):
    return re.sub(rb'[<>\n]', b'', text).strip()

def ident(user, domain):
    m = USER.match(user)
    if m:
        name, email = clean(m.group(1)), clean(m.group(2))
    else:
        name = clean(user)
        email = (re.sub(rb'[^a-z0-9._-]+', b'-', name.lower()).strip(b'-') or b'user') + b'@' + domain
    return b'%s <%s>' % (name, email) if name else b'<%s>' % email

def when(date):
    t, tz = date
    sign = b'-' if tz > 0 else b'+'
    h, m = divmod(abs(int(tz)) // 60, 60)
    return b'%d %s%02d%02d' % (int(t), sign, h, m)

def quote(path):
    if b'\n' in path or path.startswith(b'"'):
        return b'"' + path.replace(b'\\', b'\\\\').replace(b'"', b'\\"').replace(b'\n', b'\\n') + b'"'
    return path

def mode(flags):
    return b'120000' if b'l' in flags else b'100755' if b'x' in flags else b'100644'

def unstorable(path, m, folders):
    # Git cannot hold an absolute path, an empty, '.' or '..' component, a '.git' component (git
    # refuses it in any case) or a file beneath a file; the first one found ends the conversion
    # with a line the caller reads: the path, and the file it lies beneath (or null).
    parts = path.split(b'/')
    if any(part in (b'', b'.', b'..') or part.lower() == b'.git' for part in parts):
        return path, None
    for i in range(1, len(parts)):
        above = b'/'.join(parts[:i])
        if above in m:
            return path, above
    if path in folders:
        return next(other for other in m if other.startswith(path + b'/')), path
    return None

def refuse(rev, node, found, err):
    text = lambda name: None if name is None else name.decode('utf-8', 'surrogateescape')
    err.write(b'hg-export: unstorable %d %s %s\n'
              % (rev, nodemod.hex(node), json.dumps([text(found[0]), text(found[1])]).encode()))
    err.flush()
    sys.exit(3)

def commits(repo, start, end, domain, out, err):
    cl = repo.changelog
    ml = repo.manifestlog
    filelogs = {}
    cache = {}
    folders = {}
    total = end - start
    empty = manifestmod.manifestdict(repo.nodeconstants.nodelen)
    w = out.write
    for i, rev in enumerate(range(start, end)):
        c = cl.changelogrevision(rev)
        p1, p2 = cl.parentrevs(rev)
        m = ml[c.manifest].read()
        base = empty if p1 < 0 else cache.get(p1)
        if base is None:
            base = ml[cl.changelogrevision(p1).manifest].read()
        cache = {rev: m}
        # The folders of m, kept up to date from the parent's (a full scan only where history forks).
        here = folders.get(p1) if p1 >= 0 else None
        if here is None:
            here = pathutil.dirs(base)
        changes = sorted(base.diff(m).items())
        for path, ((n1, f1), (n2, f2)) in changes:
            if n2 is None:
                here.delpath(path)
            elif n1 is None:
                here.addpath(path)
        folders = {rev: here}
        if p1 < 0:
            w(b'reset refs/hg/convert\n')
        desc = c.description + b'\n'
        who = ident(c.user, domain)
        w(b'commit refs/hg/convert\nmark :%d\nauthor %s %s\ncommitter %s %s\ndata %d\n%s\n'
          % (rev + 1, who, when(c.date), who, when(c.date), len(desc), desc))
        if p1 >= 0:
            w(b'from :%d\n' % (p1 + 1))
        if p2 >= 0:
            w(b'merge :%d\n' % (p2 + 1))
        for path, ((n1, f1), (n2, f2)) in changes:
            if n2 is None:
                w(b'D %s\n' % quote(path))
                continue
            if n1 is None:
                found = unstorable(path, m, here)
                if found:
                    refuse(rev, cl.node(rev), found, err)
            log = filelogs.get(path)
            if log is None:
                log = filelogs[path] = repo.file(path)
            data = log.read(n2)
            w(b'M %s inline %s\ndata %d\n' % (mode(f2), quote(path), len(data)))
            w(data)
            w(b'\n')
        w(b'\n')
        if i % 100 == 99 or i == total - 1:
            err.write(b'converted %d/%d\n' % (i + 1, total))
            err.flush()

def refs(repo, out):
    # Names as the origin spells them (UTF-8; other bytes as lone surrogates, which JSON keeps).
    text = lambda name: name.decode('utf-8', 'surrogateescape')
    rev = repo.changelog.rev
    entries = []
    for branch, heads, tip, closed in repo.branchmap().iterbranches():
        entries.append({'kind': 'branch', 'name': text(branch), 'mark': rev(tip) + 1})
        for head in heads:
            if head != tip:
                entries.append({'kind': 'head', 'name': text(branch), 'node': nodemod.hex(head)[:12].decode(), 'mark': rev(head) + 1})
    for name, node in repo._bookmarks.items():
        if node in repo:
            entries.append({'kind': 'bookmark', 'name': text(name), 'mark': rev(node) + 1})
    for tag, node in repo.tags().items():
        if tag != b'tip' and node in repo:
            entries.append({'kind': 'tag', 'name': text(tag), 'mark': rev(node) + 1})
    out.write(json.dumps(entries).encode())

def main():
    repo = hg.repository(uimod.ui.load(), sys.argv[1].encode()).unfiltered()
    out = sys.stdout.buffer
    if sys.argv[2] == 'refs':
        refs(repo, out)
    else:
        commits(repo, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].encode(), out, sys.stderr.buffer)
        out.write(b'done\n')
    out.flush()

main()
`;

/**
 * The pipeline, in bash for `pipefail`: one process group, so a time limit kills both sides.
 * fast-import compresses at level 1 (zlib is most of its time; the pack is hardly larger) and
 * glibc keeps a heap pad (without it fast-import spends half its time growing and trimming the
 * heap: 13.7 s → 4.5 s measured).
 */
const PIPELINE =
  'set -o pipefail; "$1" -c "$2" "$3" "$4" "$5" "$6" "$7" | git -c pack.compression=1 -c core.hooksPath=/dev/null fast-import --quiet --done --force --import-marks-if-exists="$8" --export-marks="$8.new"';

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
function hgPython(home: string): Promise<string> {
  python ??= runHg(['debuginstall', '-T', '{pythonexe}'], { cwd: home, home, timeoutMs: 30_000 }).then(
    (out) => out.toString('utf8').trim() || 'python3',
    (error: unknown) => {
      python = undefined;
      throw error;
    },
  );
  return python;
}

const marksFile = (gitRepo: string) => join(gitRepo, 'hg-marks');

async function pipeline(
  run: HgExportRun,
  args: readonly [string, string, string, string, string],
): Promise<void> {
  const marks = marksFile(run.gitRepo);
  // A killed run leaves a half-written pack and marks file; neither is used.
  await rm(`${marks}.new`, { force: true });
  const packs = join(run.gitRepo, 'objects', 'pack');
  for (const name of await readdir(packs).catch(() => [] as string[]))
    if (name.startsWith('tmp_')) await rm(join(packs, name), { force: true });
  await runBounded(
    'bash',
    ['-c', PIPELINE, 'hg-export', await hgPython(run.home), PROGRAM, ...args, marks],
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
    (code, stderr, timedOut) =>
      (!timedOut && unstorablePath(stderr)) || new GitFailed(['fast-import'], code, stderr, timedOut),
  );
  await rename(`${marks}.new`, marks);
}

/** The failure of a changeset with a path Git cannot store, from the program's `unstorable` line. */
function unstorablePath(stderr: string): OriginFailed | undefined {
  const match = /^hg-export: unstorable (\d+) ([0-9a-f]{40}) (.*)$/m.exec(stderr);
  if (!match) return undefined;
  const [path, above] = JSON.parse(match[3] ?? '[]') as [string, string | null];
  return new OriginFailed(
    `${CONVERSION_FAILED}: changeset ${match[2]?.slice(0, 12)} (revision ${match[1]}) has a path Git cannot store: ${JSON.stringify(path)}${above === null ? '' : ` (beneath the file ${JSON.stringify(above)})`}`,
  );
}

/** The step a conversion failure names. */
export const CONVERSION_FAILED = 'Converting the Mercurial history to Git failed';

/**
 * Text for the user without the service's own paths (work directory, HOME, `raw.hg`): what the
 * user sees names the origin's problem, not our disk.
 */
export const hideLocalPaths = (text: string) => text.replace(/(^|[\s'"`(=])\/[^\s'"`)]*/g, '$1<path>');

/**
 * The conversion's own last words: the Python program's last exception or abort line, else git's
 * first error, else the last line; without local paths.
 */
export function conversionWords(error: GitFailed): string {
  const lines = error.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== '(aborted)' && !/^converted \d+\/\d+$/.test(line));
  const words =
    lines.filter((line) => /^(?:[\w.]*(?:Error|Exception)\b|abort:)/.test(line)).at(-1) ??
    lines.find((line) => /^(?:error|fatal):/.test(line)) ??
    lines.at(-1) ??
    `the conversion exited with ${error.exitCode}`;
  return hideLocalPaths(words).slice(0, 300);
}

/** Creates the bare repository, or leaves the one there as it is. */
const initBare = (run: HgExportRun) =>
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
  await pipeline(run, [run.hgRepo, 'commits', String(from), String(to), run.emailDomain]);
}

/** A ref the conversion program found: a branch's tip, another head of it, a bookmark or a tag. */
export interface HgRefEntry {
  readonly kind: 'branch' | 'head' | 'bookmark' | 'tag';
  readonly name: string;
  /** The head's short changeset id (`head` only). */
  readonly node?: string;
  /** The fast-import mark of its commit (revision + 1). */
  readonly mark: number;
}

type HgRefRequest = RefRequest<HgRefEntry['kind']> & { readonly mark: number };

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
 * Writes the branch, bookmark and tag refs (see the module comment and `hgRefNames`), HEAD, and
 * drops the conversion's own state; returns the renames (origin name → ref) for `renamed-refs.json`.
 */
export async function exportHgRefs(run: HgExportRun): Promise<RefRename[]> {
  await initBare(run); // an empty origin converts no range
  const listing = await runBounded(
    await hgPython(run.home),
    ['-c', PROGRAM, run.hgRepo, 'refs'],
    { cwd: run.gitRepo, env: hgEnvironment(run.home), timeoutMs: run.timeoutMs },
    (code, stderr, timedOut) => new GitFailed(['hg-export', 'refs'], code, stderr, timedOut),
  );
  const assigned = hgRefNames(JSON.parse(listing.toString('utf8')) as HgRefEntry[]);
  const local = (args: readonly string[], input?: string) =>
    runGit(args, { cwd: run.gitRepo, home: run.home, transport: 'local', timeoutMs: run.timeoutMs, input });
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
  await rm(marksFile(run.gitRepo), { force: true });
  return refRenames(assigned);
}
