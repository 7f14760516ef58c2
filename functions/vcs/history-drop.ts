/**
 * Dropping the tree entries Git refuses from a raw history (issue 28): a `.`, `..` or `.git`
 * entry in any spelling (`#domain/unstorable-paths`, git's `hasDot`, `hasDotdot`, `hasDotgit`),
 * and an entry whose name holds a `/` (`fullPathname`), which a Git origin's history may hold and
 * no checkout may write; and a `.hg` entry in any spelling, which git stores and Mercurial will not
 * check out. The history step runs it only when the whole check of the raw history
 * (`checkHistory` with `dropping`) warned of one or `holdsHgMetadata` found a `.hg`, so a history
 * without them keeps its ids. A
 * filter-repo commit callback removes every change at such a path and writes each path once, with
 * the raw commit that first wrote it, to a JSON-lines file: the report's `unstorable_paths`.
 *
 * fast-export writes an entry `a/b` as the path it spells, which the callback could not tell from
 * a file `b` in a folder `a`. So the rewrite reads a copy of the raw repository that shares its
 * objects (the raw one is never changed) in which each tree holding such an entry is replaced
 * (`refs/replace/`, which fast-export follows) by the same tree with the entry renamed to the
 * run's marker and the name in hex: a name no origin can guess, which the callback drops and lists
 * as the name it stands for. (An entry with an empty name, git's `emptyName`, never arrives: git
 * reads no tree holding one, so the origin's own upload-pack fails to send it.)
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FindingEntry } from '#domain/import-report';
import { HFS_IGNORED_SOURCE, UNSTORABLE_COMPONENT_PATTERNS } from '#domain/unstorable-paths';
import { runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';

/** A run's marker for renamed entries: `<marker><name in hex>`. */
export const slashMarker = (): string => `import-slash-${randomBytes(8).toString('hex')}-`;

/**
 * Python for filter-repo's `--commit-callback`, writing what it drops to `listFile`; `marker`
 * names the entries `renameSlashNames` renamed.
 */
export function dropCallback(listFile: string, marker: string): string {
  const literal = (text: string) => JSON.stringify(text);
  // Every metadata folder the rule names (`.git`, `.hg`), with its reason.
  const named = Object.entries(UNSTORABLE_COMPONENT_PATTERNS)
    .map(([reason, pattern]) => `(re.compile(${literal(pattern)}), ${literal(reason)})`)
    .join(', ');
  return [
    'import json, re',
    'g = globals()',
    "d = g.get('_import_drop')",
    'if d is None:',
    `  d = {'hfs': re.compile(${literal(HFS_IGNORED_SOURCE)}), 'names': [${named}], 'marker': ${literal(marker)}, 'seen': set(), 'out': open(${literal(listFile)}, 'a')}`,
    "  g['_import_drop'] = d",
    'def why(path):',
    "  for name in path.decode('utf-8', 'surrogateescape').split('/'):",
    "    if name.startswith(d['marker']): return 'slash_in_name'",
    "    if name == '': return 'empty_component'",
    "    if name in ('.', '..'): return 'dot_component'",
    "    folded = d['hfs'].sub('', name).lower()",
    "    for pattern, reason in d['names']:",
    '      if pattern.search(folded): return reason',
    '  return None',
    'def shown(path):',
    "  m = d['marker'].encode()",
    "  names = [bytes.fromhex(name[len(m):].decode()) if name.startswith(m) else name for name in path.split(b'/')]",
    "  return b'/'.join(names).decode('utf-8', 'surrogateescape').encode('utf-8', 'replace').decode('utf-8')",
    'kept = []',
    'for change in commit.file_changes:',
    "  reason = why(change.filename) if change.type in (b'M', b'D') else None",
    '  if reason is None:',
    '    kept.append(change)',
    '    continue',
    "  if change.type == b'M' and change.filename not in d['seen']:",
    "    d['seen'].add(change.filename)",
    "    d['out'].write(json.dumps({'commit': commit.original_id.decode(), 'path': shown(change.filename), 'reason': reason}) + '\\n')",
    "    d['out'].flush()",
    'commit.file_changes = kept',
  ].join('\n');
}

/**
 * Makes `sourceDir` a copy of the raw repository `rawDir` (its refs; its objects shared) in which
 * each of `trees` reads with every entry whose name holds a `/` renamed to `marker` and the name
 * in hex. Three git calls, whatever the number of trees.
 */
export async function renameSlashNames(
  rawDir: string,
  sourceDir: string,
  trees: readonly string[],
  marker: string,
  job: GitJob,
): Promise<void> {
  await runGit(['clone', '--mirror', '--shared', '--quiet', rawDir, sourceDir], local(rawDir, job));
  const raw = await runGit(['cat-file', '--batch'], {
    ...local(rawDir, job),
    input: `${trees.join('\n')}\n`,
    maxStdoutBytes: 1024 * 1024 * 1024,
  });
  const listings: Buffer[] = [];
  let at = 0;
  for (const tree of trees) {
    const headerEnd = raw.indexOf(0x0a, at);
    const [oid = '', type = '', size = ''] = raw.subarray(at, headerEnd).toString('latin1').split(' ');
    if (oid !== tree || type !== 'tree') throw new Error(`tree ${tree} could not be read`);
    const content = raw.subarray(headerEnd + 1, headerEnd + 1 + Number(size));
    at = headerEnd + 1 + content.length + 1;
    listings.push(...treeListing(content, tree.length / 2, marker), Buffer.from([0]));
  }
  const renamed = (
    await runGit(['mktree', '-z', '--missing', '--batch'], {
      ...local(sourceDir, job),
      input: Buffer.concat(listings),
    })
  )
    .toString('latin1')
    .trim()
    .split('\n');
  await runGit(['update-ref', '--stdin'], {
    ...local(sourceDir, job),
    input: trees.map((tree, i) => `update refs/replace/${tree} ${renamed[i] ?? ''}\n`).join(''),
  });
}

/** A raw tree's entries as `git mktree -z` reads them, a name holding `/` renamed. */
function treeListing(content: Buffer, hashBytes: number, marker: string): Buffer[] {
  const entries: Buffer[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 1 + hashBytes > content.length) throw new Error('a malformed tree');
    const mode = content.subarray(at, space).toString('latin1');
    const name = content.subarray(space + 1, nul);
    const oid = content.subarray(nul + 1, nul + 1 + hashBytes).toString('hex');
    at = nul + 1 + hashBytes;
    const kind = Number.parseInt(mode, 8) & 0o170000;
    const type = kind === 0o040000 ? 'tree' : kind === 0o160000 ? 'commit' : 'blob';
    const shown = name.includes(0x2f) ? Buffer.from(`${marker}${name.toString('hex')}`) : name;
    entries.push(Buffer.concat([Buffer.from(`${mode} ${type} ${oid}\t`), shown, Buffer.from([0])]));
  }
  return entries;
}

/** The paths the callback dropped, in the order it met them. */
export async function droppedPaths(listFile: string): Promise<FindingEntry[]> {
  const text = await readFile(listFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as FindingEntry);
}
