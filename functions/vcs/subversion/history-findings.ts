/**
 * What the history of the imported project holds that Git will not (issue 18's import report),
 * read in one pass over `svnadmin dump --deltas` of the complete mirror before it is converted:
 * each revision's properties and each node's property changes, never a file's content.
 *
 * - `outside_layout_paths`: in the standard layout, each path beside `trunk`, `branches` and
 *   `tags` (and each file directly in `branches/` or `tags/`), at the first revision it appeared:
 *   the rules drop them.
 * - `svn_externals`: each revision that set or changed `svn:externals` on a path, its value
 *   verbatim (a removal is not listed; a copy carries its source's value without listing it).
 * - `svn_properties`: each property name Git has no place for, on paths (set or changed on how
 *   many distinct paths, in how many revisions) or on revisions (carried by how many).
 * - `svn_mergeinfo`: each change of `svn:mergeinfo` (set, changed or removed), kept in
 *   `svn-mergeinfo.json` until the conversion says which became merge commits (`finish.ts`).
 * - `authorless_commits`: each revision but 0 without `svn:author` (or with an empty one). The
 *   mirror's copy gets the author `(no author)` (git-svn's name for them), which the identity map
 *   makes `(no author) <no-author@<repository uuid>>`: one author the owner can map.
 * - `unstorable_paths`: each file added (or replaced) at a path Git must not store
 *   (`#domain/unstorable-paths`, inside trunk, a branch or a tag), and each file a folder copy
 *   brought there (`copied-paths.ts`, read after the dump), with its revision, in the dump's
 *   order: the rules drop them (`rules.ts`).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FindingEntry } from '#domain/import-report';
import { componentReason } from '#domain/unstorable-paths';
import { saveFinding } from '../findings.ts';
import { runSvn } from './command.ts';
import { CopiedPaths } from './copied-paths.ts';
import { type DumpProps, dumpReader } from './dump-reader.ts';
import { localFailure } from './errors.ts';
import { emptyTally, loadTally, PlacedListing, saveTally } from './scan-tally.ts';

/** The name svn-all-fast-export is given for a revision without author (git-svn's). */
export const NO_AUTHOR = '(no author)';

/** The Git identity of revisions without author. */
export const noAuthorIdentity = (uuid: string) => `${NO_AUTHOR} <no-author@${uuid}>`;

/** svn-all-fast-export's identity map (`--identity-map`): only the missing author. */
export const IDENTITY_MAP = 'svn-identities.txt';

/** The mergeinfo changes awaiting the conversion's verdict. */
export const PENDING_MERGEINFO = 'svn-mergeinfo.json';

/** Node properties the conversion carries: ignores → `.gitignore`, executable bit, symlinks. */
const CARRIED = new Set(['svn:ignore', 'svn:global-ignores', 'svn:executable', 'svn:special']);
/** Revision properties the commit carries (author, date, message). */
const COMMIT_PROPS = new Set(['svn:author', 'svn:date', 'svn:log']);
const LAYOUT_FOLDERS = new Set(['trunk', 'branches', 'tags']);

export interface HistoryScan {
  readonly mirror: string;
  readonly workDir: string;
  readonly home: string;
  /** The imported project's path in the repository, no slashes around ('' for the root). */
  readonly path: string;
  /** Whether the project has the standard layout (`trunk` at the youngest revision). */
  readonly standard: boolean;
  readonly uuid: string;
  readonly timeoutMs: number;
  /** The first revision to scan: 0 for the whole history, later after a sync's mirror grew. */
  readonly from: number;
}

/**
 * Scans the mirror (from `scan.from`, adding to the tally of the revisions before it; whole when
 * that tally is older than what it now keeps, `loadTally`), saves the
 * findings it knows, writes the identity map and gives the scanned authorless revisions their
 * author.
 */
export async function scanHistory(scan: HistoryScan): Promise<void> {
  const prefix = scan.path === '' ? '' : `${scan.path}/`;
  /** The node's path in the project ('' for its root), or undefined when outside it. */
  const inProject = (path: string) =>
    path === scan.path ? '' : path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
  const shown = (path: string) => `/${path}`;
  /** Why the rules drop a file at the project path `rel`, if they do. */
  const unstorableIn = (rel: string) => {
    const parts = rel.split('/');
    const inTree = scan.standard ? parts.slice(parts[0] === 'trunk' ? 1 : 2) : parts;
    return inTree.map(componentReason).find((found) => found !== undefined);
  };

  const saved = await loadTally(scan.workDir, scan.from);
  const from = saved === undefined ? 0 : scan.from;
  const tally = saved ?? emptyTally();
  const { outside, externals, mergeinfo, authorless, unstorable, nodeProps, revisionProps } = tally;
  /** This scan's left-out files, by their place in the dump: a copy's are known after it. */
  const leftOut = new PlacedListing();
  const unstorableAt = (place: number, revision: number, path: string) => {
    const rel = inProject(path);
    const reason = rel === undefined ? undefined : unstorableIn(rel);
    if (reason !== undefined) leftOut.add(place, { revision, path: shown(path), reason });
  };
  const copied = new CopiedPaths(tally.unstorableNames, (path) => inProject(path) !== undefined);
  let place = 0;
  const authorlessProps = new Map<number, DumpProps>();
  /** The revisions of this scan that set each node property (ranges never overlap). */
  const propRevisions = new Map<string, Set<number>>();

  /** Where the dump is, for a failure's message: the revision and the path being read. */
  const at: { revision?: number; path?: string } = {};
  const reader = dumpReader({
    revision(revision, props) {
      at.revision = revision;
      at.path = undefined;
      for (const name of props.set.keys())
        if (!COMMIT_PROPS.has(name)) revisionProps.set(name, (revisionProps.get(name) ?? 0) + 1);
      const author = props.set.get('svn:author');
      if (revision > 0 && (author === undefined || author === '' || author === NO_AUTHOR)) {
        authorless.add({ revision, author: noAuthorIdentity(scan.uuid) });
        authorlessProps.set(revision, props);
      }
    },
    node(node) {
      at.path = shown(node.path);
      place += 1;
      copied.node(node, place);
      const rel = inProject(node.path);
      if (rel === undefined) return;
      if (scan.standard && rel !== '' && node.action !== 'delete') {
        const [top = '', ...rest] = rel.split('/');
        const key = !LAYOUT_FOLDERS.has(top)
          ? top
          : top !== 'trunk' && rest.length === 1 && node.kind === 'file'
            ? rel
            : undefined;
        if (key !== undefined && !outside.has(key)) outside.set(key, node.revision);
      }
      if (node.kind === 'file' && (node.action === 'add' || node.action === 'replace'))
        unstorableAt(place, node.revision, node.path);
      if (!node.props) return;
      const path = shown(node.path);
      for (const [name, value] of node.props.set) {
        if (name === 'svn:externals') externals.add({ path, revision: node.revision, definition: value });
        else if (name === 'svn:mergeinfo') mergeinfo.add({ path, revision: node.revision, merged: false });
        else if (!CARRIED.has(name)) {
          const seen = nodeProps.get(name) ?? { paths: new Set(), revisions: 0 };
          seen.paths.add(path);
          nodeProps.set(name, seen);
          const revisions = propRevisions.get(name) ?? new Set();
          revisions.add(node.revision);
          propRevisions.set(name, revisions);
        }
      }
      if (node.props.deleted.includes('svn:mergeinfo'))
        mergeinfo.add({ path, revision: node.revision, merged: false });
    },
  });
  try {
    const range = from > 0 ? ['-r', `${from}:HEAD`, '--incremental'] : [];
    await runSvn('svnadmin', ['dump', '--deltas', '-q', ...range, '--', scan.mirror], {
      cwd: scan.home,
      home: scan.home,
      timeoutMs: scan.timeoutMs,
      onStdout: (chunk) => reader.push(chunk),
    });
    reader.end();
    at.revision = undefined;
    at.path = undefined;
    await copied.expand(scan, unstorableAt);
  } catch (error) {
    throw localFailure(error, 'Converting', scan, at);
  }
  leftOut.appendTo(unstorable);
  for (const [name, revisions] of propRevisions) {
    const seen = nodeProps.get(name);
    if (seen) seen.revisions += revisions.size;
  }

  const { workDir } = scan;
  await saveFinding(
    workDir,
    'outside_layout_paths',
    [...outside].map(([path, revision]) => ({ path: shown(`${prefix}${path}`), revision })),
  );
  await saveFinding(workDir, 'svn_externals', externals.entries, externals.count);
  const properties: FindingEntry[] = [
    ...[...nodeProps].map(([name, seen]) => ({
      name,
      scope: 'path',
      paths: seen.paths.size,
      revisions: seen.revisions,
    })),
    ...[...revisionProps].map(([name, revisions]) => ({ name, scope: 'revision', paths: 0, revisions })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await saveFinding(workDir, 'svn_properties', properties);
  await saveFinding(workDir, 'authorless_commits', authorless.entries, authorless.count);
  await saveFinding(workDir, 'unstorable_paths', unstorable.entries, unstorable.count);
  await writeFile(
    join(workDir, PENDING_MERGEINFO),
    JSON.stringify({ count: mergeinfo.count, listed: mergeinfo.entries }),
  );
  await writeFile(join(workDir, IDENTITY_MAP), `${NO_AUTHOR} = ${noAuthorIdentity(scan.uuid)}\n`);
  await nameAuthorless(scan, authorlessProps);
  await saveTally(workDir, tally);
}

/**
 * Gives each authorless revision of the mirror (a scratch copy) the author `NO_AUTHOR`, in one
 * `svnadmin load-revprops` of their properties plus that one: svn-all-fast-export would make them
 * `nobody <nobody@localhost>`, an identity that is neither the repository's nor valid to map.
 */
async function nameAuthorless(scan: HistoryScan, revisions: ReadonlyMap<number, DumpProps>): Promise<void> {
  if (revisions.size === 0) return;
  const records = [...revisions].map(([revision, props]) => {
    const all = new Map(props.set);
    all.set('svn:author', NO_AUTHOR);
    const block = Buffer.concat([
      ...[...all].map(([key, value]) => {
        const k = Buffer.from(key);
        const v = Buffer.from(value);
        return Buffer.concat([
          Buffer.from(`K ${k.length}\n`),
          k,
          Buffer.from(`\nV ${v.length}\n`),
          v,
          Buffer.from('\n'),
        ]);
      }),
      Buffer.from('PROPS-END\n'),
    ]);
    return Buffer.concat([
      Buffer.from(
        `Revision-number: ${revision}\nProp-content-length: ${block.length}\nContent-length: ${block.length}\n\n`,
      ),
      block,
      Buffer.from('\n'),
    ]);
  });
  const stream = Buffer.concat([Buffer.from('SVN-fs-dump-format-version: 2\n\n'), ...records]);
  const file = join(scan.workDir, 'authorless.revprops');
  await writeFile(file, stream);
  await runSvn(
    'svnadmin',
    ['load-revprops', '-q', '--bypass-prop-validation', '-F', file, '--', scan.mirror],
    {
      cwd: scan.home,
      home: scan.home,
      timeoutMs: 120_000,
    },
  );
}
