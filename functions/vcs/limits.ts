/**
 * The import limits every origin adapter enforces on what it has fetched so far, with one wording
 * for the user: `IMPORT_MAX_BYTES` on the bytes on disk (a mirror, a dump, `raw.git`) and
 * `IMPORT_MAX_OBJECTS` on the Git objects in `raw.git`.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './git-command.ts';
import { OriginFailed } from './origin.ts';

export const oversizeError = (maxBytes: number) =>
  new OriginFailed(`The repository is larger than the import limit of ${formatBytes(maxBytes)}`);

export const tooManyObjectsError = () =>
  new OriginFailed('The repository has more objects than the import limit');

const formatBytes = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;

/** Bytes of the regular files below `dir` (0 when it does not exist). */
export async function directorySize(dir: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directorySize(path);
    else if (entry.isFile()) total += await fileSize(path);
  }
  return total;
}

/** Bytes of one file (0 when it does not exist). */
export const fileSize = (path: string): Promise<number> =>
  stat(path).then(
    (info) => info.size,
    () => 0,
  );

/** Fails with the user's message when the files below `dir` exceed `maxBytes`. */
export async function checkSize(dir: string, maxBytes: number): Promise<void> {
  if ((await directorySize(dir)) > maxBytes) throw oversizeError(maxBytes);
}

/** Objects in a Git repository, loose and packed. */
export async function objectCount(repo: string, home: string): Promise<number> {
  const counts = (
    await runGit(['count-objects', '-v'], { cwd: repo, home, transport: 'local', timeoutMs: 600_000 })
  ).toString();
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(counts)?.[1] ?? 0);
  return field('count') + field('in-pack');
}

/** The repository's object count; fails with the user's message when it exceeds `maxObjects`. */
export async function checkObjects(repo: string, home: string, maxObjects: number): Promise<number> {
  const objects = await objectCount(repo, home);
  if (objects > maxObjects) throw tooManyObjectsError();
  return objects;
}
