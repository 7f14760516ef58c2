/**
 * receive-pack's quarantine directories (`objects/tmp_objdir-incoming-*`): a push's objects wait
 * there until its refs are updated, and git removes the directory when receive-pack exits, but not
 * when a signal ends it (git 2.39 and later): `git http-backend` ends it with SIGTERM when a body
 * with a `Content-Length` stops short, and the front end when a push does not end in time. The
 * front end follows each push's quarantine (`followQuarantine`) and removes what a push it served
 * left; what a push leaves when the task itself ends under it is removed by another task once the
 * dead task's lease on it expires (`quarantine-leases.ts`), and one no lease names once nothing has
 * been written in it for `STALE_QUARANTINE_MS` (git's own `prune` judges them by age too, after two
 * weeks). What remains counts in the repository's size.
 */
import { readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { groupAlive, groupMembers } from './process-group.ts';
import { quarantineLeases } from './quarantine-leases.ts';

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

/** receive-pack names its quarantine to the processes it starts (index-pack, unpack-objects, hooks). */
const QUARANTINE_VARIABLE = 'GIT_QUARANTINE_PATH=';
/** How often a push's processes are looked at until its quarantine is known. */
const FOLLOW_INTERVAL_MS = 250;
/** How long the push's processes may take to be gone (the front end's grace, SIGTERM, SIGKILL). */
const GONE_WITHIN_MS = 15_000;

export interface FollowedQuarantine {
  /**
   * Once the push's process has exited: waits for every process of its group to be gone, then
   * removes its quarantine if git left it. Never rejects.
   */
  settle(): Promise<void>;
}

/**
 * Follows the quarantine of the receive-pack run in the process group `group` (started for one
 * request: `spawnGroup`) into the bare repository at `repositoryPath`, so that it can be removed
 * when git leaves it. Safe beside other pushes to the same repository: the directory is the one
 * named in the environment of a process of this request's own group (receive-pack makes it with
 * `mkdtemp` and names it only to its own children), it must lie in this repository's `objects/`
 * with receive-pack's prefix, and it is removed only once no process of the group is left to
 * write to it. Another push's directory is never named in this group, and a directory is never
 * looked for by comparing listings, which a concurrent push would confuse. The group is looked at
 * only while its leader has not exited: a process group lives as long as one member does, and its
 * ID is not reused meanwhile.
 */
export function followQuarantine(repositoryPath: string, group: number): FollowedQuarantine {
  let found: string | undefined;
  let following = true;
  const look = async () => {
    const objects = await realpath(join(repositoryPath, 'objects')).catch(() => undefined);
    for (const pid of await groupMembers(group)) {
      if (!following || found) return;
      const environment = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
      const variable = environment.split('\0').find((entry) => entry.startsWith(QUARANTINE_VARIABLE));
      const path = variable?.slice(QUARANTINE_VARIABLE.length);
      if (!path || !basename(path).startsWith(PREFIX)) continue;
      if (objects && (await realpath(dirname(path)).catch(() => undefined)) === objects) {
        found = path;
        // Named in this task's lease: should the task die with the push, another removes it.
        await quarantineLeases()?.hold(path);
      }
    }
  };
  let looking: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    if (found) return clearInterval(timer);
    looking = looking.then(look).catch(() => undefined);
  }, FOLLOW_INTERVAL_MS);
  timer.unref();
  return {
    async settle() {
      following = false;
      clearInterval(timer);
      await looking;
      if (!found) return;
      const path = found;
      try {
        if (!(await exists(path))) return;
        for (const until = Date.now() + GONE_WITHIN_MS; groupAlive(group); await delay(100))
          // Still written to by a process that would not end: left for the stale sweep.
          if (Date.now() > until) return;
        await rm(path, { recursive: true, force: true }).catch(() => undefined);
      } finally {
        await quarantineLeases()?.release(path);
      }
    },
  };
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );
