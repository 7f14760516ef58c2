/**
 * Replaying changesets into `<workDir>/raw.git` with `git fast-import`: one commit per changeset
 * on `refs/heads/main`, marked with its id (the marks persist between chunks), every file a
 * regular file (mode 100644: TFVC has no executable bit).
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GitFailed, runGit } from '#vcs/git-command';
import { FAST_IMPORT_MALLOC } from '#vcs/history';
import { isBareRepository } from '#vcs/http-backend';
import { directorySize, oversizeError, tooManyObjectsError } from '#vcs/limits';
import { objectTotal } from '#vcs/object-database';
import { OriginFailed } from '#vcs/origin';
import { gitIdentity } from './authors.ts';
import type { Changeset } from './changesets.ts';
import { type ListedChangeset, MARKS_FILE } from './state.ts';
import { PLACEHOLDER, type WorkingTree } from './working-tree.ts';

/** fast-import's C-style quoted path (always quoted: spaces, quotes and non-ASCII stay exact). */
const quote = (path: string) => `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

function epochSeconds(date: string): number {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/**
 * The fast-import commands of one changeset: commit `:id` on `refs/heads/main` after `:previous`.
 * `tree` (main's files and folders so far) is kept current, so only what exists is moved or
 * deleted: fast-import refuses to rename a path that is not there (an empty TFVC folder, for one).
 * With `keepEmpty`, each folder left empty holds an empty `.gitignore`, removed once it has other
 * entries.
 */
export function commitCommands(
  changeset: Changeset,
  previous: number | undefined,
  host: string,
  tree: WorkingTree,
  keepEmpty: boolean,
): { parts: Buffer[]; bytes: number; objects: number } {
  const author = gitIdentity(changeset.author, host);
  const committer = gitIdentity(changeset.committer, host);
  const when = `${epochSeconds(changeset.date)} +0000`;
  const comment = changeset.comment.replace(/\r\n?/g, '\n');
  const text = comment.trim() === '' ? `Changeset ${changeset.id}` : comment;
  const message = Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
  const head = [
    'commit refs/heads/main',
    `mark :${changeset.id}`,
    `author ${author.name} <${author.email}> ${when}`,
    `committer ${committer.name} <${committer.email}> ${when}`,
    `data ${message.length}`,
  ].join('\n');
  const parts: Buffer[] = [Buffer.from(`${head}\n`), message, Buffer.from('\n')];
  if (previous !== undefined) parts.push(Buffer.from(`from :${previous}\n`));
  // Folders whose entries changed: only they can have become empty, or stopped being empty.
  const touched = new Set<string>();
  let objects = 1;
  for (const change of changeset.changes) {
    if (change.kind === 'delete') {
      const gone = tree.removeUnder(change.path);
      touched.add(parentOf(change.path));
      if (gone.files.length > 0) parts.push(Buffer.from(`D ${quote(change.path)}\n`));
    } else if (change.kind === 'rename-folder' && change.from !== undefined) {
      const from = change.from;
      const moved = tree.removeUnder(from);
      const to = (path: string) => `${change.path}${path.slice(from.length)}`;
      for (const folder of moved.kept) tree.kept.add(to(folder));
      for (const folder of moved.folders) {
        tree.addFolder(to(folder));
        touched.add(to(folder));
      }
      for (const file of moved.files) tree.addFile(to(file));
      touched.add(parentOf(from)).add(parentOf(change.path));
      if (moved.files.length > 0) parts.push(Buffer.from(`R ${quote(from)} ${quote(change.path)}\n`));
    } else if (change.kind === 'folder') {
      tree.addFolder(change.path);
      touched.add(change.path).add(parentOf(change.path));
    } else if (change.kind === 'write' && change.content !== undefined) {
      const parent = parentOf(change.path);
      if (change.path === `${parent}/${PLACEHOLDER}`) tree.adopt(parent);
      tree.addFile(change.path);
      touched.add(parent);
      parts.push(Buffer.from(`M 100644 inline ${quote(change.path)}\ndata ${change.content.length}\n`));
      parts.push(change.content, Buffer.from('\n'));
      objects += 1;
    }
  }
  if (keepEmpty)
    for (const folder of [...touched].sort()) {
      if (folder === '') continue;
      if (tree.isEmpty(folder) && !tree.kept.has(folder) && !tree.files.has(`${folder}/${PLACEHOLDER}`)) {
        parts.push(Buffer.from(`M 100644 inline ${quote(tree.keep(folder))}\ndata 0\n\n`));
        objects += 1;
      } else if (!tree.isEmpty(folder) && tree.kept.has(folder))
        parts.push(Buffer.from(`D ${quote(tree.unkeep(folder))}\n`));
    }
  parts.push(Buffer.from('\n'));
  return { parts, bytes: parts.reduce((sum, part) => sum + part.length, 0), objects };
}

/** The files of main (none before the first commit). */
export async function filesOf(repo: string, home: string): Promise<Set<string>> {
  try {
    await local(repo, home, ['rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  } catch {
    return new Set();
  }
  const out = await runGit(['ls-tree', '-r', '-z', '--name-only', 'refs/heads/main'], {
    cwd: repo,
    home,
    transport: 'local',
    timeoutMs: 600_000,
    maxStdoutBytes: 1024 * 1024 * 1024,
  });
  return new Set(
    out
      .toString('utf8')
      .split('\0')
      .filter((path) => path !== ''),
  );
}

const local = (repo: string, home: string, args: readonly string[], input?: Buffer) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000, input, env: FAST_IMPORT_MALLOC });

export async function ensureBareRepository(repo: string, home: string): Promise<void> {
  // Not one to git (`isBareRepository`): none yet, or what a killed init left.
  if (!(await isBareRepository(repo))) {
    await rm(repo, { recursive: true, force: true });
    await mkdir(repo, { recursive: true });
    await runGit(['init', '--bare', '--quiet', '--', repo], {
      cwd: home,
      home,
      transport: 'local',
      timeoutMs: 30_000,
    });
  }
}

export async function fastImport(repo: string, home: string, marks: string, stream: Buffer): Promise<void> {
  try {
    await local(
      repo,
      home,
      ['fast-import', '--quiet', '--done', `--import-marks-if-exists=${marks}`, `--export-marks=${marks}`],
      stream,
    );
  } catch (error) {
    if (error instanceof GitFailed) {
      const lines = error.stderr.trim().split('\n');
      const line = lines.find((entry) => entry.startsWith('fatal:')) ?? lines.at(-1) ?? '';
      throw new OriginFailed(`Replaying the TFVC history failed: ${line.slice(0, 200)}`);
    }
    throw error;
  }
}

/**
 * How many changesets of the listing raw.git holds: the one `main` points at (by its mark) and
 * those before it. Equal to the cursor's count unless a chunk died between fast-import and the
 * cursor write.
 */
export async function replayedSoFar(
  repo: string,
  home: string,
  workDir: string,
  listing: readonly ListedChangeset[],
  saved: number,
): Promise<number> {
  let tip: string;
  try {
    tip = (await local(repo, home, ['rev-parse', '--verify', '--quiet', 'refs/heads/main']))
      .toString()
      .trim();
  } catch {
    return 0;
  }
  let marks: string;
  try {
    marks = await readFile(join(workDir, MARKS_FILE), 'utf8');
  } catch {
    return saved;
  }
  const line = marks.split('\n').find((entry) => entry.endsWith(` ${tip}`));
  const id = Number(line?.slice(1, line.indexOf(' ')));
  const index = listing.findIndex((changeset) => changeset.id === id);
  return index < 0 ? saved : index + 1;
}

export async function checkLimits(repo: string, maxBytes: number, maxObjects: number): Promise<void> {
  if ((await directorySize(repo)) > maxBytes) throw oversizeError(maxBytes);
  if ((await objectTotal(repo)) > maxObjects) throw tooManyObjectsError();
}
