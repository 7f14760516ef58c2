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
 * head of a branch `hg/<branch>/<12 hex>` (so no changeset is lost), every bookmark its own name,
 * every tag a lightweight tag. Authors are `name <email>`; a user without an email gets a made-up
 * valid one (`hgUserIdentity` in mercurial.ts computes the same), so no rewrite is needed for it.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runBounded } from './bounded-process.ts';
import { GitFailed, gitEnvironment, runGit } from './git-command.ts';
import { hgEnvironment, runHg } from './hg-command.ts';

const PROGRAM = String.raw`
import re, sys
from mercurial import hg, ui as uimod, manifest as manifestmod, node as nodemod

USER = re.compile(rb'^(.*?)\s*<([^>]*)>\s*$', re.S)
BAD_REF = re.compile(rb'[\x00-\x20\x7f~^:?*\[\\]+')

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

def commits(repo, start, end, domain, out, err):
    cl = repo.changelog
    ml = repo.manifestlog
    filelogs = {}
    cache = {}
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
        for path, ((n1, f1), (n2, f2)) in sorted(base.diff(m).items()):
            if n2 is None:
                w(b'D %s\n' % quote(path))
                continue
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

def refname(name):
    name = BAD_REF.sub(b'_', name).strip(b'/.')
    name = re.sub(rb'\.\.+', b'.', re.sub(rb'/+', b'/', name))
    name = re.sub(rb'\.lock(/|$)', rb'_lock\1', name).replace(b'@{', b'@_')
    return name or b'_'

def refs(repo, out):
    targets = {}
    books = {refname(k): v for k, v in repo._bookmarks.items()}
    for branch, heads, tip, closed in repo.branchmap().iterbranches():
        base = b'main' if branch == b'default' and b'main' not in books else b'branches/' + refname(branch)
        targets[b'refs/heads/' + base] = tip
        for head in heads:
            if head != tip:
                targets[b'refs/heads/hg/%s/%s' % (refname(branch), nodemod.hex(head)[:12])] = head
    for name, node in books.items():
        targets[b'refs/heads/' + name] = node
    for tag, node in repo.tags().items():
        if tag != b'tip' and node in repo:
            targets[b'refs/tags/' + refname(tag)] = node
    for ref, node in sorted(targets.items()):
        out.write(b'reset %s\nfrom :%d\n\n' % (ref, repo.changelog.rev(node) + 1))

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
    (code, stderr, timedOut) => new GitFailed(['fast-import'], code, stderr, timedOut),
  );
  await rename(`${marks}.new`, marks);
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

/** Writes the branch, bookmark and tag refs (see the module comment), HEAD, and drops the conversion's own state. */
export async function exportHgRefs(run: HgExportRun): Promise<void> {
  await initBare(run); // an empty origin converts no range
  await pipeline(run, [run.hgRepo, 'refs', '0', '0', run.emailDomain]);
  const local = (args: readonly string[]) =>
    runGit(args, { cwd: run.gitRepo, home: run.home, transport: 'local', timeoutMs: 600_000 });
  await local(['update-ref', '-d', 'refs/hg/convert']).catch(() => undefined);
  const heads = (await local(['for-each-ref', '--format=%(refname)', 'refs/heads/']))
    .toString()
    .split('\n')
    .filter((line) => line !== '');
  const head = heads.includes('refs/heads/main') ? 'refs/heads/main' : heads[0];
  if (head) await local(['symbolic-ref', 'HEAD', head]);
  await rm(marksFile(run.gitRepo), { force: true });
}
