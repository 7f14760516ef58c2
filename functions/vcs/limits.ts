/**
 * The import limits, with one wording for the user, on what every step writes: `IMPORT_MAX_BYTES`
 * on the bytes it stores (the raw step's mirror, dump or `raw.git`; the rewritten repository with
 * its Git LFS objects; what the push step adds to the hosted repository and its LFS store) and
 * `IMPORT_MAX_OBJECTS` on the Git objects of the repository it writes.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_IMPORT_MAX_BYTES, DEFAULT_IMPORT_MAX_OBJECTS } from '#shared/config';
import { objectTotal } from './object-database.ts';
import { OriginFailed } from './origin.ts';

/** The limits a step writes under (config `IMPORT_MAX_BYTES`, `IMPORT_MAX_OBJECTS`). */
export interface ImportLimits {
  readonly maxBytes: number;
  readonly maxObjects: number;
}

/** The limits given, the service's defaults for those not given. */
export const importLimits = (given: Partial<ImportLimits> = {}): ImportLimits => ({
  maxBytes: given.maxBytes ?? DEFAULT_IMPORT_MAX_BYTES,
  maxObjects: given.maxObjects ?? DEFAULT_IMPORT_MAX_OBJECTS,
});

export const oversizeError = (maxBytes: number) =>
  new OriginFailed(`The repository is larger than the import limit of ${formatBytes(maxBytes)}`);

export const tooManyObjectsError = () =>
  new OriginFailed('The repository has more objects than the import limit');

const formatBytes = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;

/** Entries of one folder looked at side by side (a Subversion mirror's shard holds 1,000 files). */
const SIZE_READS = 64;

/**
 * Bytes of the regular files below `dir` (0 when it does not exist). The entries of a folder are
 * looked at `SIZE_READS` at a time, side by side: each is a round trip to the file system (on
 * EFS, a network one), and a repository's folders hold a few dozen of them.
 */
export async function directorySize(dir: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (let start = 0; start < entries.length; start += SIZE_READS) {
    const sizes = await Promise.all(
      entries.slice(start, start + SIZE_READS).map((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return directorySize(path);
        return entry.isFile() ? fileSize(path) : 0;
      }),
    );
    for (const size of sizes) total += size;
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

/** The repository's object count; fails with the user's message when it exceeds `maxObjects`. */
export async function checkObjects(repo: string, maxObjects: number): Promise<number> {
  const objects = await objectTotal(repo);
  if (objects > maxObjects) throw tooManyObjectsError();
  return objects;
}

/** How often `withinSize` measures. */
const WATCH_INTERVAL_MS = 1000;

/**
 * Runs `write` while `measure` (the bytes it has stored so far) is taken every second: past
 * `maxBytes` the signal aborts, which kills the writing tool's whole process group (`runGit`'s
 * `signal`), and the call fails with the user's message instead of the tool's. Measured once more
 * when `write` ends, so a write quicker than the interval is held to the limit too.
 */
export async function withinSize<T>(
  maxBytes: number,
  measure: () => Promise<number>,
  write: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abort = new AbortController();
  let measuring = false;
  const timer = setInterval(() => {
    if (measuring || abort.signal.aborted) return;
    measuring = true;
    measure()
      .then(
        (bytes) => {
          if (bytes > maxBytes) abort.abort();
        },
        () => undefined,
      )
      .finally(() => {
        measuring = false;
      });
  }, WATCH_INTERVAL_MS);
  try {
    const result = await write(abort.signal);
    if (abort.signal.aborted || (await measure()) > maxBytes) throw oversizeError(maxBytes);
    return result;
  } catch (error) {
    if (abort.signal.aborted) throw oversizeError(maxBytes);
    throw error;
  } finally {
    clearInterval(timer);
  }
}
