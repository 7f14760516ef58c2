/**
 * `empty_directories` (issue 18's import report): the directories with nothing in them at the
 * youngest revision, from `svn ls -R --xml` read as it streams (it lists depth first: a directory
 * is empty when the next entry is not inside it), and whether each ref's tree has them.
 *
 * In the standard layout only the directories inside trunk, a branch or a tag (a root) can be
 * reported, and each root's are kept (`svn-empty-dirs.json`) with the revision they were listed
 * at: a sync lists again only the roots its new revisions changed (their `svn log -v`), so a
 * history with hundreds of tags is not listed whole at each sync. Put together in svn's order
 * (`branches/*`, `tags/*`, `trunk`, each sorted by name as bytes), the roots' lists are the whole
 * listing's.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FindingEntry } from '#domain/import-report';
import { runGit } from '../git-command.ts';
import { rawRepositoryPath } from '../origin.ts';
import { decodeXml, localUrl, runSvn } from './command.ts';
import type { SvnRefs } from './rules.ts';

export interface EmptyDirsAt {
  readonly workDir: string;
  readonly mirror: string;
  readonly home: string;
  /** The imported project's path in the repository, no slashes around. */
  readonly path: string;
  readonly refs: SvnRefs;
  /** Whether the project has the standard layout (its roots are trunk, branches and tags). */
  readonly standard: boolean;
}

/** Each root's empty directories (project-relative) at revision `through`. */
interface Listed {
  readonly through: number;
  readonly roots: Record<string, string[]>;
}

const LISTED_FILE = 'svn-empty-dirs.json';
const TIMEOUT_MS = 600_000;

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const inside = (path: string, folder: string) => folder === '' || path.startsWith(`${folder}/`);
const joined = (folder: string, name: string) => (folder === '' ? name : `${folder}/${name}`);

/** The root a project path is in (`trunk`, `branches/X`, `tags/Y`), if any. */
const rootOf = (path: string): string | undefined => {
  const [top = '', name] = path.split('/');
  if (top === 'trunk') return top;
  return (top === 'branches' || top === 'tags') && name !== undefined ? `${top}/${name}` : undefined;
};

export async function emptyDirectories(at: EmptyDirsAt): Promise<FindingEntry[]> {
  const empty = at.standard ? await emptyByRoot(at) : (await listEmpty(at, '', 'HEAD')).empty;
  const placed = empty.flatMap((dir) => {
    const place = at.refs.locate(dir);
    return place && place.inner !== '' ? [{ dir, place }] : [];
  });
  if (placed.length === 0) return [];
  const answer = (
    await runGit(['cat-file', '--batch-check=%(objecttype)'], {
      cwd: rawRepositoryPath(at.workDir),
      home: at.home,
      transport: 'local',
      timeoutMs: TIMEOUT_MS,
      input: `${placed.map(({ place }) => `${place.ref}:${place.inner}`).join('\n')}\n`,
    })
  )
    .toString('utf8')
    .split('\n');
  const shown = (dir: string) => `/${joined(at.path, dir)}`;
  return placed.map(({ dir, place }, index) => ({
    path: shown(dir),
    ref: place.ref,
    kept: answer[index] === 'tree',
  }));
}

/** The empty directories inside the roots, listing only the roots changed since the kept lists. */
async function emptyByRoot(at: EmptyDirsAt): Promise<string[]> {
  const youngest = Number(
    (
      await runSvn('svnlook', ['youngest', '--', at.mirror], {
        cwd: at.home,
        home: at.home,
        timeoutMs: 60_000,
      })
    )
      .toString()
      .trim(),
  );
  const kept = await readListed(at.workDir);
  let roots: Record<string, string[]>;
  if (kept === undefined || kept.through > youngest) {
    const whole = await listEmpty(at, '', youngest);
    roots = Object.fromEntries(whole.roots.map((root) => [root, []]));
    for (const dir of whole.empty) {
      const root = rootOf(dir);
      if (root !== undefined && roots[root] !== undefined && dir !== root) roots[root].push(dir);
    }
  } else {
    const changed = kept.through < youngest ? await changedPaths(at, kept.through + 1, youngest) : [];
    roots = {};
    for (const root of await rootsAt(at, youngest)) {
      const known = kept.roots[root];
      const stale =
        known === undefined ||
        changed.some((path) => path === undefined || inside(path, root) || inside(root, path));
      roots[root] = stale ? (await listEmpty(at, root, youngest)).empty : known;
    }
  }
  await writeFile(
    join(at.workDir, LISTED_FILE),
    JSON.stringify({ through: youngest, roots } satisfies Listed),
  );
  return Object.keys(roots)
    .sort(byRoots)
    .flatMap((root) => roots[root] ?? []);
}

/** svn's order of the roots: by their top folder, then by name, as bytes. */
const byRoots = (a: string, b: string) => {
  const [topA = '', ...nameA] = a.split('/');
  const [topB = '', ...nameB] = b.split('/');
  return byBytes(topA, topB) || byBytes(nameA.join('/'), nameB.join('/'));
};

const readListed = (workDir: string): Promise<Listed | undefined> =>
  readFile(join(workDir, LISTED_FILE), 'utf8').then(
    (text) => JSON.parse(text) as Listed,
    () => undefined,
  );

/**
 * `svn ls -R` of the project folder `folder` at `revision`: its empty directories (project-relative)
 * and the roots it lists.
 */
async function listEmpty(
  at: EmptyDirsAt,
  folder: string,
  revision: number | 'HEAD',
): Promise<{ empty: string[]; roots: string[] }> {
  const empty: string[] = [];
  const roots: string[] = [];
  let open: string | undefined;
  let pending = '';
  const entry = /<entry\s+kind="(dir|file)"\s*>\s*<name>([^<]*)<\/name>[\s\S]*?<\/entry>/g;
  await runSvn('svn', ['list', '-R', '--xml', '--', localUrl(at.mirror, joined(at.path, folder), revision)], {
    cwd: at.home,
    home: at.home,
    timeoutMs: TIMEOUT_MS,
    onStdout(chunk) {
      pending += chunk.toString('utf8');
      let consumed = 0;
      for (const match of pending.matchAll(entry)) {
        consumed = (match.index ?? 0) + match[0].length;
        const name = joined(folder, decodeXml(match[2] ?? ''));
        if (open !== undefined && !name.startsWith(`${open}/`)) empty.push(open);
        open = match[1] === 'dir' ? name : undefined;
        if (match[1] === 'dir' && rootOf(name) === name) roots.push(name);
      }
      pending = pending.slice(consumed);
    },
  });
  if (open !== undefined) empty.push(open);
  return { empty, roots };
}

/** trunk, each branch and each tag at `revision` (non-recursive listings). */
async function rootsAt(at: EmptyDirsAt, revision: number): Promise<string[]> {
  const dirs = async (folder: string) => {
    const xml = await runSvn(
      'svn',
      ['list', '--xml', '--', localUrl(at.mirror, joined(at.path, folder), revision)],
      {
        cwd: at.home,
        home: at.home,
        timeoutMs: TIMEOUT_MS,
        maxStdoutBytes: 256 * 1024 * 1024,
      },
    ).then(
      (out) => out.toString('utf8'),
      () => '', // no such folder
    );
    return [...xml.matchAll(/<entry\s+kind="dir"\s*>\s*<name>([^<]*)<\/name>/g)].map((match) =>
      joined(folder, decodeXml(match[1] ?? '')),
    );
  };
  const top = await dirs('');
  const roots = top.includes('trunk') ? ['trunk'] : [];
  for (const folder of ['branches', 'tags']) if (top.includes(folder)) roots.push(...(await dirs(folder)));
  return roots;
}

/**
 * The paths revisions `from`..`to` changed, project-relative; undefined for a change of a folder
 * above the project (which may have changed all of it). Paths outside the project are left out.
 */
async function changedPaths(at: EmptyDirsAt, from: number, to: number): Promise<(string | undefined)[]> {
  const xml = (
    await runSvn('svn', ['log', '-v', '--xml', '-r', `${from}:${to}`, '--', localUrl(at.mirror, '', to)], {
      cwd: at.home,
      home: at.home,
      timeoutMs: TIMEOUT_MS,
      maxStdoutBytes: 512 * 1024 * 1024,
    })
  ).toString('utf8');
  const project = at.path;
  return [...xml.matchAll(/<path\b[^>]*>([^<]*)<\/path>/g)].flatMap((match) => {
    const path = decodeXml(match[1] ?? '').replace(/^\/+|\/+$/g, '');
    if (path === project || inside(path, project))
      return [project === '' ? path : path.slice(project.length + 1)];
    return inside(project, path) ? [undefined] : [];
  });
}
