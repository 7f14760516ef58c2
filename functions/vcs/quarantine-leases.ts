/**
 * Leases on the quarantines of the pushes a Git front end task serves, on the file system every
 * task shares. A task that is killed (replaced, scaled in, out of memory) leaves its pushes'
 * quarantines behind, and no other task can tell them from a push under way in another task by
 * looking at them. So each task keeps a lease file (`<repositories>/.quarantine-leases/<task>.json`)
 * naming the quarantines it follows (`followQuarantine`), and touches it every `LEASE_REFRESH_MS`.
 * A lease untouched for `LEASE_EXPIRY_MS` is a dead task's: any task (the next one at its start,
 * then every refresh) removes the quarantines it names, then the lease. A quarantine no lease
 * names (its push killed before it was found, 250 ms in) is left to the stale sweep (a day).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, realpath, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';

const LEASE_DIR = '.quarantine-leases';
const PREFIX = 'tmp_objdir-incoming-';
export const LEASE_REFRESH_MS = 10_000;
/** Six refreshes missed: a task that lives does not stall that long. */
export const LEASE_EXPIRY_MS = 60_000;

export interface QuarantineLeases {
  /** Names a quarantine this task follows. */
  hold(path: string): Promise<void>;
  /** Its push has ended, and its quarantine is gone or left to the stale sweep. */
  release(path: string): Promise<void>;
  /** Removes what expired leases name, and the leases. Never rejects. */
  sweep(now?: number): Promise<void>;
  /** Ends this task's lease; one that still names a quarantine is left to expire and be swept. */
  stop(): Promise<void>;
}

let current: QuarantineLeases | undefined;

/** This process's leases, once its front end has started them. */
export const quarantineLeases = (): QuarantineLeases | undefined => current;

/** A path a lease may name: a quarantine in a repository's `objects/` under `roots`. */
const isQuarantine = (roots: readonly string[], path: string): boolean =>
  basename(path).startsWith(PREFIX) &&
  basename(dirname(path)) === 'objects' &&
  roots.some((root) => path.startsWith(`${root}${sep}`));

export async function startQuarantineLeases(repositoriesDir: string): Promise<QuarantineLeases> {
  const dir = join(repositoriesDir, LEASE_DIR);
  await mkdir(dir, { recursive: true });
  const roots = [repositoriesDir, await realpath(repositoriesDir)];
  const file = join(dir, `${randomUUID()}.json`);
  const held = new Set<string>();
  let writing: Promise<void> = Promise.resolve();
  // Whole files by rename: a task that reads a lease never reads half of one.
  const write = () => {
    writing = writing
      .then(async () => {
        await writeFile(`${file}.tmp`, JSON.stringify([...held]));
        await rename(`${file}.tmp`, file);
      })
      .catch(() => undefined);
    return writing;
  };
  const expire = async (lease: string) => {
    const named = JSON.parse(await readFile(lease, 'utf8').catch(() => '[]')) as unknown;
    for (const path of Array.isArray(named) ? named : [])
      if (typeof path === 'string' && isQuarantine(roots, path))
        await rm(path, { recursive: true, force: true }).catch(() => undefined);
    await rm(lease, { force: true }).catch(() => undefined);
  };
  const sweep = async (now = Date.now()) => {
    for (const name of await readdir(dir).catch(() => [])) {
      const lease = join(dir, name);
      if (lease === file || lease === `${file}.tmp`) continue;
      const info = await stat(lease).catch(() => undefined);
      if (!info || now - info.mtimeMs <= LEASE_EXPIRY_MS) continue;
      if (name.endsWith('.json')) await expire(lease);
      else await rm(lease, { force: true }).catch(() => undefined);
    }
  };
  await write();
  await sweep();
  const timer = setInterval(() => {
    const now = new Date();
    void utimes(file, now, now).catch(write);
    void sweep();
  }, LEASE_REFRESH_MS);
  timer.unref();
  const leases: QuarantineLeases = {
    async hold(path) {
      held.add(path);
      await write();
    },
    async release(path) {
      if (held.delete(path)) await write();
    },
    sweep,
    async stop() {
      clearInterval(timer);
      await writing;
      if (held.size === 0) await rm(file, { force: true }).catch(() => undefined);
      if (current === leases) current = undefined;
    },
  };
  current = leases;
  return leases;
}
