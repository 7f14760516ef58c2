import { rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { StepInput } from '#services/import-worker';
import { config } from '#shared/config';
import { importAttemptDir } from '#vcs/hosted-paths';

/**
 * A step ran out of file system space: the shared file system the import works on (EFS), or the
 * function's own `/tmp` (Lambda's ephemeral storage). Not retried: the same history needs the same
 * space again (docs/decisions.md, issue 36); the import ends in `error` with this message.
 */
export class StorageFull extends Error {
  override readonly name = 'StorageFull';
}

/** What a tool or Node.js says when a write finds no space (or no quota) left. */
const NO_SPACE = /\bENOSPC\b|\bEDQUOT\b|No space left on device|Disk quota exceeded/i;

/** Whether `error`, its output or any of its causes says the file system was full. */
function saysNoSpace(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message, stderr, cause } = error as Record<string, unknown>;
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  if ([message, stderr].some((text) => typeof text === 'string' && NO_SPACE.test(text))) return true;
  return saysNoSpace(cause, depth + 1);
}

const mebibytes = (bytes: number): string => {
  const mib = bytes / 2 ** 20;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
};

/** The fuller (by space left) of the two places a step writes, named for the person reading the import's error. */
async function fullest(): Promise<string> {
  const places = [
    { dir: config().importWorkDir, name: (dir: string) => `the shared file system at ${dir}` },
    { dir: tmpdir(), name: (dir: string) => `${dir} (the function's ephemeral storage)` },
  ];
  const measured = await Promise.all(
    places.map(async (place) => {
      const stats = await statfs(place.dir).catch(() => undefined);
      if (!stats) return { ...place, free: Number.POSITIVE_INFINITY, size: 0 };
      return { ...place, free: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize };
    }),
  );
  // The one with the least space left: a tool that failed often removes its partial files first,
  // so neither may be full any more; and EFS, elastic, shows exabytes free where /tmp has its size.
  measured.sort((a, b) => a.free - b.free);
  const [place] = measured;
  if (!place || place.size === 0) return 'a file system it writes to has no space left';
  return `${place.name(place.dir)} (${mebibytes(place.size)}) has no space left`;
}

/**
 * `error` itself, or, when it says the file system was full, a `StorageFull` naming the storage
 * and its size, after the attempt's working files are removed: they would hold the space for
 * every other import, and a restart starts again from the origin.
 */
export async function storageFullOr(error: unknown, input: StepInput): Promise<unknown> {
  if (!saysNoSpace(error)) return error;
  // Measured while the space is still taken.
  const where = await fullest();
  await rm(importAttemptDir(config().importWorkDir, input.owner, input.repo, input.attempt), {
    recursive: true,
    force: true,
    maxRetries: 3,
  }).catch(() => undefined);
  return new StorageFull(
    `The import's working storage is full: ${where}. Restart the import once more space is available.`,
    { cause: error },
  );
}
