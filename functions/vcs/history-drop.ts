/**
 * Dropping the tree entries Git refuses from a raw history (issue 28): a `.`, `..` or `.git`
 * entry in any spelling (`#domain/unstorable-paths`, git's `hasDot`, `hasDotdot`, `hasDotgit`),
 * which a Git origin's history may hold and no checkout may write. The history step runs it only
 * when the whole check of the raw history (`checkHistory` with `dropping`) warned of one, so a
 * history without them keeps its ids. A filter-repo commit callback removes every change at such
 * a path and writes each path once, with the raw commit that first wrote it, to a JSON-lines file:
 * the report's `unstorable_paths`.
 */
import { readFile } from 'node:fs/promises';
import type { FindingEntry } from '#domain/import-report';
import { HFS_IGNORED_SOURCE, UNSTORABLE_COMPONENT_PATTERNS } from '#domain/unstorable-paths';

/** Python for filter-repo's `--commit-callback`, writing what it drops to `listFile`. */
export function dropCallback(listFile: string): string {
  const literal = (text: string) => JSON.stringify(text);
  return [
    'import json, re',
    'g = globals()',
    "d = g.get('_import_drop')",
    'if d is None:',
    `  d = {'hfs': re.compile(${literal(HFS_IGNORED_SOURCE)}), 'git': re.compile(${literal(UNSTORABLE_COMPONENT_PATTERNS.git_metadata)}), 'seen': set(), 'out': open(${literal(listFile)}, 'a')}`,
    "  g['_import_drop'] = d",
    'def why(path):',
    "  for name in path.decode('utf-8', 'surrogateescape').split('/'):",
    "    if name == '': return 'empty_component'",
    "    if name in ('.', '..'): return 'dot_component'",
    "    if d['git'].search(d['hfs'].sub('', name).lower()): return 'git_metadata'",
    '  return None',
    'kept = []',
    'for change in commit.file_changes:',
    "  reason = why(change.filename) if change.type in (b'M', b'D') else None",
    '  if reason is None:',
    '    kept.append(change)',
    '    continue',
    "  if change.type == b'M' and change.filename not in d['seen']:",
    "    d['seen'].add(change.filename)",
    "    path = change.filename.decode('utf-8', 'surrogateescape').encode('utf-8', 'replace').decode('utf-8')",
    "    d['out'].write(json.dumps({'commit': commit.original_id.decode(), 'path': path, 'reason': reason}) + '\\n')",
    "    d['out'].flush()",
    'commit.file_changes = kept',
  ].join('\n');
}

/** The paths the callback dropped, in the order it met them. */
export async function droppedPaths(listFile: string): Promise<FindingEntry[]> {
  const text = await readFile(listFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as FindingEntry);
}
