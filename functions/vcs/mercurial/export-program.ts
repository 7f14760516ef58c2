/**
 * The conversion program (Python: it needs Mercurial's own library, so it runs on the Python that
 * runs `hg`). `commits <repo> <from> <to> <email domain> <dropped file>` writes a `git fast-import`
 * stream of revisions from … to−1 (marks `:<rev + 1>`), with a `converted a/b` line on stderr every
 * 100 revisions. A path Git cannot store (`#domain/unstorable-paths`, and a file beneath a file) is
 * left out of the tree, with its later changes; each one is added, as a JSON line, to the dropped
 * file's copy `<dropped file>.new` (`unstorable-paths.ts` reads it);
 * `refs <repo> <email domain> <most listed>` writes the branches (closed or not), heads, bookmarks
 * and tags, every branch head's full id (closed ones too: together they name every changeset), the subrepositories at the changesets they point at, and the changesets without an
 * author, as JSON (`refs.ts`).
 */
import { HFS_IGNORED_SOURCE, UNSTORABLE_COMPONENT_PATTERNS } from '#domain/unstorable-paths';

const COMPONENT_PATTERNS = JSON.stringify(Object.entries(UNSTORABLE_COMPONENT_PATTERNS));

export const HG_EXPORT_PROGRAM = String.raw`
import json, re, sys
from mercurial import hg, ui as uimod, manifest as manifestmod, node as nodemod, pathutil, subrepoutil

USER = re.compile(rb'^(.*?)\s*<([^>]*)>\s*$', re.S)

def clean(text):
    return re.sub(rb'[<>\n]', b'', text).strip()

def ident(user, domain):
    # A user with neither a name nor an email (empty, as old Mercurial allowed, or "<>") gets the
    # identity of no author, as a Subversion revision without svn:author does.
    m = USER.match(user)
    if m:
        name, email = clean(m.group(1)), clean(m.group(2))
    else:
        name = clean(user)
        email = (re.sub(rb'[^a-z0-9._-]+', b'-', name.lower()).strip(b'-') or b'user') + b'@' + domain if name else b''
    if not name and not email:
        return b'(no author) <no-author@%s>' % domain
    return b'%s <%s>' % (name, email) if name else b'<%s>' % email

def authorless(user):
    m = USER.match(user)
    return not (clean(m.group(1)) or clean(m.group(2))) if m else not clean(user)

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

HFS_IGNORED = re.compile(r'${HFS_IGNORED_SOURCE}')
METADATA = [(reason, re.compile(pattern)) for reason, pattern in json.loads(r'${COMPONENT_PATTERNS}')]

def component_reason(name):
    if name == '':
        return 'empty_component'
    if name in ('.', '..'):
        return 'dot_component'
    folded = HFS_IGNORED.sub('', name).lower()
    for reason, pattern in METADATA:
        if pattern.search(folded):
            return reason
    return None

def path_reason(path):
    # The rules of #domain/unstorable-paths, on the path as text (other bytes as lone surrogates).
    text = path.decode('utf-8', 'surrogateescape')
    if '\0' in text:
        return 'nul'
    if text.startswith('/'):
        return 'absolute'
    for name in text.split('/'):
        reason = component_reason(name)
        if reason:
            return reason
    return None

def unstorable(path, m, folders, dropped):
    # Why Git cannot store the added path (and the file it clashes with), or None. A path beneath
    # a file is left out; a file where a folder of kept files is, is left out itself.
    reason = path_reason(path)
    if reason:
        return reason, None
    parts = path.split(b'/')
    for i in range(1, len(parts)):
        above = b'/'.join(parts[:i])
        if above in m and above not in dropped:
            return 'beneath_file', above
    if path in folders:
        below = next((other for other in m if other.startswith(path + b'/') and other not in dropped), None)
        if below is not None:
            return 'file_and_folder', below
    return None

class Dropped:
    """The paths left out so far (a file of JSON lines, rewritten whole as <file>.new per range)."""
    def __init__(self, file):
        self.file = file
        self.lines = []
        self.paths = set()
        try:
            with open(file, 'rb') as f:
                self.lines = [line for line in f.read().split(b'\n') if line]
        except FileNotFoundError:
            pass
        for line in self.lines:
            entry = json.loads(line)
            if 'deleted' in entry:
                self.paths.discard(entry['deleted'].encode('utf-8', 'surrogateescape'))
            else:
                self.paths.add(entry['path'].encode('utf-8', 'surrogateescape'))
    def __contains__(self, path):
        return path in self.paths
    def add(self, rev, node, path, reason, clash):
        text = lambda name: None if name is None else name.decode('utf-8', 'surrogateescape')
        self.paths.add(path)
        self.lines.append(json.dumps({'revision': rev, 'changeset': nodemod.hex(node).decode(),
                                      'path': text(path), 'reason': reason, 'clash': text(clash)}).encode())
    def delete(self, path):
        self.paths.discard(path)
        self.lines.append(json.dumps({'deleted': path.decode('utf-8', 'surrogateescape')}).encode())
    def save(self):
        with open(self.file + '.new', 'wb') as f:
            f.write(b''.join(line + b'\n' for line in self.lines))

def commits(repo, start, end, domain, dropped, out, err):
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
                if path in dropped:
                    dropped.delete(path)
                else:
                    w(b'D %s\n' % quote(path))
                continue
            if n1 is None:
                found = unstorable(path, m, here, dropped)
                if found:
                    dropped.add(rev, cl.node(rev), path, found[0], found[1])
                    continue
            elif path in dropped:
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

def refs(repo, out, domain, limit):
    # Names as the origin spells them (UTF-8; other bytes as lone surrogates, which JSON keeps).
    text = lambda name: name.decode('utf-8', 'surrogateescape')
    cl = repo.changelog
    rev = cl.rev
    entries = []
    every_head = []
    for branch, heads, tip, closed in repo.branchmap().iterbranches():
        every_head.extend(nodemod.hex(head).decode() for head in heads)
        entries.append({'kind': 'branch', 'name': text(branch), 'mark': rev(tip) + 1, 'closed': bool(closed)})
        for head in heads:
            if head != tip:
                entries.append({'kind': 'head', 'name': text(branch), 'node': nodemod.hex(head)[:12].decode(), 'mark': rev(head) + 1})
    for name, node in repo._bookmarks.items():
        if node in repo:
            entries.append({'kind': 'bookmark', 'name': text(name), 'mark': rev(node) + 1})
    for tag, node in repo.tags().items():
        if tag != b'tip' and node in repo:
            entries.append({'kind': 'tag', 'name': text(tag), 'mark': rev(node) + 1})
    out.write(json.dumps({'refs': entries, 'heads': every_head, 'subrepos': subrepos(repo, entries, text),
                          'authorless': authorless_commits(repo, domain, limit, text)}).encode())

def subrepos(repo, entries, text):
    # The subrepositories of every changeset a ref points at (what a checkout of any ref shows),
    # as Mercurial itself reads .hgsub and .hgsubstate; each (path, source, revision, kind) once.
    found, seen = [], set()
    for mark in sorted({entry['mark'] for entry in entries}):
        ctx = repo[mark - 1]
        if b'.hgsub' not in ctx:
            continue
        node = ctx.hex().decode()
        try:
            state = sorted(subrepoutil.state(ctx, repo.ui).items())
        except Exception:
            # A .hgsub Mercurial cannot read is listed as itself, once per changeset.
            state = [(b'.hgsub', (None, None, None))]
        for path, (source, revision, kind) in state:
            key = (path, source, revision, kind)
            if key in seen:
                continue
            seen.add(key)
            value = lambda v: None if v is None else text(v)
            found.append({'path': text(path), 'source': value(source), 'revision': value(revision),
                          'kind': value(kind), 'changeset': node})
    return found

def authorless_commits(repo, domain, limit, text):
    cl = repo.changelog
    count, listed = 0, []
    for r in cl:
        user = cl.changelogrevision(r).user
        if authorless(user):
            count += 1
            if len(listed) < limit:
                listed.append({'changeset': nodemod.hex(cl.node(r)).decode(), 'user': text(user),
                               'author': text(ident(user, domain))})
    return {'count': count, 'listed': listed}

def main():
    repo = hg.repository(uimod.ui.load(), sys.argv[1].encode()).unfiltered()
    out = sys.stdout.buffer
    if sys.argv[2] == 'refs':
        refs(repo, out, sys.argv[3].encode(), int(sys.argv[4]))
    else:
        dropped = Dropped(sys.argv[6])
        commits(repo, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].encode(), dropped, out, sys.stderr.buffer)
        dropped.save()
        out.write(b'done\n')
    out.flush()

main()
`;
