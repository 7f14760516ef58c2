/**
 * What `main` holds while changesets are replayed: its files (as raw.git has them, placeholders
 * included), the TFVC folders that exist (Git has no folders, so they are kept here, between chunks
 * in `tfvc-folders.json`), and the folders holding a `.gitignore` placeholder the importer wrote
 * (`choices.keepEmptyDirectories`). A folder is empty when nothing but its own placeholder is in it.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeWhole } from '../whole-file.ts';

/** git-svn's placeholder name, and what svn-all-fast-export's `--empty-dirs` writes for Subversion. */
export const PLACEHOLDER = '.gitignore';

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
const isUnder = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

export class WorkingTree {
  readonly files: Set<string>;
  readonly folders = new Set<string>();
  readonly kept = new Set<string>();
  /** Each folder's direct entries: its files but a placeholder, and its folders. */
  private readonly entries = new Map<string, number>();

  constructor(files: Iterable<string>, folders: Iterable<string> = [], kept: Iterable<string> = []) {
    this.files = new Set();
    for (const folder of kept) this.kept.add(folder);
    for (const folder of folders) this.addFolder(folder);
    for (const file of files) this.addFile(file);
  }

  private counts(file: string): boolean {
    const parent = parentOf(file);
    return !(file === `${parent === '' ? '' : `${parent}/`}${PLACEHOLDER}` && this.kept.has(parent));
  }

  private bump(folder: string, by: number): void {
    this.entries.set(folder, (this.entries.get(folder) ?? 0) + by);
  }

  /** The folder and its ancestors exist (the project's root is not a folder of the tree). */
  addFolder(folder: string): void {
    if (folder === '' || this.folders.has(folder)) return;
    this.folders.add(folder);
    this.bump(parentOf(folder), 1);
    this.addFolder(parentOf(folder));
  }

  addFile(file: string): void {
    if (this.files.has(file)) return;
    this.files.add(file);
    if (this.counts(file)) this.bump(parentOf(file), 1);
    this.addFolder(parentOf(file));
  }

  /** A placeholder's folder got a file of that name from the origin: it is the origin's now. */
  adopt(folder: string): void {
    if (!this.kept.delete(folder)) return;
    this.bump(folder, 1);
  }

  /** The files at `path` or under it. */
  filesUnder(path: string): string[] {
    return this.files.has(path) ? [path] : [...this.files].filter((file) => isUnder(file, path));
  }

  /** Removes `path` and everything under it; what was there, to move it elsewhere. */
  removeUnder(path: string): { files: string[]; folders: string[]; kept: string[] } {
    const files = this.filesUnder(path);
    for (const file of files) {
      if (this.counts(file)) this.bump(parentOf(file), -1);
      this.files.delete(file);
    }
    const kept = [...this.kept].filter((folder) => isUnder(folder, path));
    for (const folder of kept) this.kept.delete(folder);
    const folders = [...this.folders].filter((folder) => isUnder(folder, path));
    for (const folder of folders) {
      this.folders.delete(folder);
      this.entries.delete(folder);
      if (!isUnder(parentOf(folder), path)) this.bump(parentOf(folder), -1);
    }
    return { files, folders, kept };
  }

  isEmpty(folder: string): boolean {
    return this.folders.has(folder) && (this.entries.get(folder) ?? 0) === 0;
  }

  /** Writes a placeholder into an empty folder (the caller writes the file into Git). */
  keep(folder: string): string {
    this.kept.add(folder);
    const file = `${folder}/${PLACEHOLDER}`;
    this.addFile(file);
    return file;
  }

  /** Removes a folder's placeholder (the caller deletes the file in Git). */
  unkeep(folder: string): string {
    const file = `${folder}/${PLACEHOLDER}`;
    this.files.delete(file);
    this.kept.delete(folder);
    return file;
  }

  /** Every empty folder, sorted. */
  emptyFolders(): string[] {
    return [...this.folders].filter((folder) => this.isEmpty(folder)).sort();
  }
}

/**
 * The folders and placeholders of main at changeset `at`, saved beside raw.git. Written as
 * `tfvc-folders.next.json` before fast-import and renamed once the cursor is saved, so whichever
 * of the two matches main's changeset after a chunk was killed is the right one.
 */
interface SavedFolders {
  readonly at: number | null;
  readonly folders: readonly string[];
  readonly kept: readonly string[];
}

const FOLDERS_FILE = 'tfvc-folders.json';
const NEXT_FILE = 'tfvc-folders.next.json';

export async function saveNextFolders(workDir: string, at: number, tree: WorkingTree): Promise<void> {
  const saved: SavedFolders = { at, folders: [...tree.folders].sort(), kept: [...tree.kept].sort() };
  await writeWhole(join(workDir, NEXT_FILE), JSON.stringify(saved));
}

export async function commitFolders(workDir: string): Promise<void> {
  const next = await readSaved(join(workDir, NEXT_FILE));
  if (next === undefined) return;
  await writeWhole(join(workDir, FOLDERS_FILE), JSON.stringify(next));
  await rm(join(workDir, NEXT_FILE), { force: true });
}

/** The working tree of main at changeset `at` (null before the first), from raw.git's files. */
export async function loadWorkingTree(
  workDir: string,
  at: number | null,
  files: Iterable<string>,
): Promise<WorkingTree> {
  for (const name of [FOLDERS_FILE, NEXT_FILE]) {
    const saved = await readSaved(join(workDir, name));
    if (saved !== undefined && saved.at === at) return new WorkingTree(files, saved.folders, saved.kept);
  }
  // Before the first changeset, or (should the files be lost) the folders that hold files.
  return new WorkingTree(files);
}

async function readSaved(file: string): Promise<SavedFolders | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SavedFolders;
  } catch {
    return undefined;
  }
}
