/**
 * receive-pack's quarantine directories (`objects/tmp_objdir-incoming-*`): a push's objects wait
 * there until its refs are updated, and git removes the directory when receive-pack exits, but not
 * when a signal ends it (git 2.39 and later) or the task ends under it. What such a push leaves is
 * removed once nothing has been written in it for `STALE_QUARANTINE_MS` (git's own `prune` judges
 * them by age too, after two weeks); what remains counts in the repository's size.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

const PREFIX = 'tmp_objdir-incoming-';

/**
 * Longer than any push can go without writing to its quarantine: index-pack writes what it reads
 * as it reads it, and a connection idle for 10 minutes is closed (functions/git-server/server.ts).
 * The exceptions are a pack of fewer than 100 objects (unpack-objects writes each object whole),
 * and the checks after the pack has arrived, both far shorter than this unless a body trickles for
 * a day. Removing a push's quarantine under it fails that push, and nothing else.
 */
export const STALE_QUARANTINE_MS = 24 * 60 * 60 * 1000;

interface Quarantine {
  readonly path: string;
  /** Bytes on disk, as `git count-objects` counts them. */
  readonly bytes: number;
  /** The newest modification time of the directory or anything in it. */
  readonly lastWriteMs: number;
}

/** The quarantine directories of the bare repository at `path`, as they are now. */
async function quarantines(path: string): Promise<Quarantine[]> {
  const objects = join(path, 'objects');
  const names = (await readdir(objects).catch(() => [])).filter((name) => name.startsWith(PREFIX));
  const found: Quarantine[] = [];
  for (const name of names) {
    const root = join(objects, name);
    // A push under way adds, moves and removes files meanwhile: what has gone is not counted.
    const entries = ['', ...(await readdir(root, { recursive: true }).catch(() => []))];
    const stats = await Promise.all(entries.map((entry) => stat(join(root, entry)).catch(() => undefined)));
    const present = stats.filter((entry) => entry !== undefined);
    if (present.length === 0) continue;
    found.push({
      path: root,
      bytes: present.reduce((sum, entry) => sum + (entry.isFile() ? entry.blocks * 512 : 0), 0),
      lastWriteMs: Math.max(...present.map((entry) => entry.mtimeMs)),
    });
  }
  return found;
}

/** Removes the quarantine directories nothing has written to for `STALE_QUARANTINE_MS`. */
export async function removeStaleQuarantines(path: string, now = Date.now()): Promise<void> {
  for (const quarantine of await quarantines(path))
    if (now - quarantine.lastWriteMs > STALE_QUARANTINE_MS)
      await rm(quarantine.path, { recursive: true, force: true }).catch(() => undefined);
}

/** What the quarantine directories hold, in KiB (a push under way's and any not yet stale). */
export async function quarantinedKiB(path: string): Promise<number> {
  const bytes = (await quarantines(path)).reduce((sum, quarantine) => sum + quarantine.bytes, 0);
  return Math.ceil(bytes / 1024);
}
