import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_EXPIRY_MS, startQuarantineLeases } from '#vcs/quarantine-leases';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('quarantine leases on a shared file system', () => {
  it('removes what a dead task leased once its lease expires, and never what a live task holds', async () => {
    const repositories = await mkdtemp(join(tmpdir(), 'leases-'));
    roots.push(repositories);
    const objects = join(repositories, 'octocat', 'r.git', 'objects');
    const dead = join(objects, 'tmp_objdir-incoming-dead');
    const live = join(objects, 'tmp_objdir-incoming-live');
    const unleased = join(objects, 'tmp_objdir-incoming-unleased');
    for (const dir of [dead, live, unleased]) await mkdir(dir, { recursive: true });

    const dying = await startQuarantineLeases(repositories);
    await dying.hold(dead);
    await dying.stop(); // a task that names a quarantine leaves its lease to expire
    const living = await startQuarantineLeases(repositories);
    await living.hold(live);

    // Not yet expired: nothing goes.
    await living.sweep();
    expect(await exists(dead)).toBe(true);

    const leaseDir = join(repositories, '.quarantine-leases');
    const long = new Date(Date.now() - LEASE_EXPIRY_MS - 1000);
    // The dead task's lease, last touched longer ago than the expiry.
    for (const name of await readdir(leaseDir))
      if ((await readFile(join(leaseDir, name), 'utf8')).includes('incoming-dead'))
        await utimes(join(leaseDir, name), long, long);
    const next = await startQuarantineLeases(repositories); // a new task sweeps at its start
    expect(await exists(dead)).toBe(false);
    expect(await exists(live)).toBe(true);
    // One no lease names is left to the stale sweep (a day without writes).
    expect(await exists(unleased)).toBe(true);
    expect((await readdir(leaseDir)).filter((name) => name.endsWith('.json'))).toHaveLength(2);
    await Promise.all([living.stop(), next.stop()]);
  });
});
