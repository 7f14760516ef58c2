import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processTable } from '#test/process-tree';
import { spawnGroup, TERM_GRACE_MS } from '#vcs/process-group';

/**
 * A stopped group, observed from outside: every process of it (the leader and a helper it started
 * in the background, as git starts index-pack) gets SIGTERM first, so that it can tidy up as git
 * does on it, and SIGKILL ends whatever is left after the grace.
 */

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'process-group-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether any process of the group `pgid` still runs. An orphaned helper that has exited counts as
 * ended: reaping it is PID 1's part (`git-frontend-reaping.test.ts`).
 */
const groupRuns = async (pgid: number): Promise<boolean> =>
  [...(await processTable()).values()].some((entry) => entry.pgrp === pgid && entry.state !== 'Z');

/** How long until no process of the group runs, at most `withinMs`. */
async function untilEnded(pgid: number, withinMs: number): Promise<number> {
  const started = Date.now();
  while ((await groupRuns(pgid)) && Date.now() - started < withinMs) await sleep(20);
  return Date.now() - started;
}

/** `sh` with a helper in the background; each runs `onTerm` (with `$1` its role) on SIGTERM. */
function startGroup(onTerm: string) {
  const trap = (role: string) => `trap '${onTerm.replaceAll('$1', role)}' TERM`;
  const script = `${trap('leader')}; (${trap('helper')}; echo ready; while :; do sleep 0.05; done) & wait; wait`;
  const group = spawnGroup('sh', ['-c', script], { cwd: work, env: { PATH: process.env.PATH } });
  group.child.stderr.resume();
  const ready = new Promise<void>((resolve) => group.child.stdout.once('data', () => resolve()));
  return { ...group, ready, pgid: group.child.pid as number };
}

describe('spawnGroup().stop', () => {
  it('sends SIGTERM to every process of the group first, so each can tidy up', async () => {
    const group = startGroup('touch term-$1; exit 0');
    await group.ready;
    group.stop();
    expect(await untilEnded(group.pgid, TERM_GRACE_MS)).toBeLessThan(TERM_GRACE_MS);
    expect((await readdir(work)).filter((name) => name.startsWith('term-')).sort()).toEqual([
      'term-helper',
      'term-leader',
    ]);
  });

  it('ends with SIGKILL whatever is left of the group after the grace', async () => {
    const group = startGroup('');
    await group.ready;
    group.stop();
    await sleep(TERM_GRACE_MS / 2);
    expect(await groupRuns(group.pgid)).toBe(true);
    expect(await untilEnded(group.pgid, TERM_GRACE_MS)).toBeLessThan(TERM_GRACE_MS);
  });
});
