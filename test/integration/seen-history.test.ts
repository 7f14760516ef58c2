import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitAuthors } from '#vcs/git-authors';
import { prepareHome } from '#vcs/git-command';
import { newLargeBlob, recordSeenTips, seenTips } from '#vcs/seen-history';

/*
 * A sync's passes over authors and large files read only what the raw history gained since the
 * attempt before (`seen-history.ts`), with real git: the tips recorded before a fetch leave out
 * every commit and object they reach, and a tip git no longer has means reading everything.
 */

let work: string;
let raw: string;
const job = () => ({ home: join(work, 'home'), timeoutMs: 60_000 });

function commit(file: string, bytes: number, who: string): void {
  const env = {
    ...process.env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: who,
    GIT_AUTHOR_EMAIL: `${who}@example.org`,
    GIT_COMMITTER_NAME: who,
    GIT_COMMITTER_EMAIL: `${who}@example.org`,
  };
  const checkout = join(work, 'checkout');
  execFileSync('sh', ['-c', `head -c ${bytes} /dev/urandom > ${file}`], { cwd: checkout });
  execFileSync('git', ['add', '.'], { cwd: checkout, env });
  execFileSync('git', ['commit', '-qm', file], { cwd: checkout, env });
  execFileSync('git', ['push', '-q', raw, 'HEAD:refs/heads/main'], { cwd: checkout, env });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'seen-history-'));
  raw = join(work, 'raw.git');
  execFileSync('git', ['init', '-q', '--bare', raw]);
  execFileSync('git', ['init', '-q', join(work, 'checkout')]);
  await prepareHome(join(work, 'home'), [raw]);
  commit('a.txt', 100, 'ada');
  commit('b.txt', 100, 'brian');
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('what a sync has not seen', () => {
  it('lists only the new commits’ identities and finds a large blob only among new objects', async () => {
    await recordSeenTips(work, 7, job());
    const seen = await seenTips(work, 7);
    expect(seen).toHaveLength(1);
    expect(await seenTips(work, 8)).toBeUndefined();

    commit('c.txt', 100, 'chen');
    expect((await gitAuthors(raw, job().home, seen)).map((a) => a.name)).toEqual(['chen']);
    expect((await gitAuthors(raw, job().home)).map((a) => a.name)).toEqual(['ada', 'brian', 'chen']);
    expect(await newLargeBlob(raw, 1000, seen ?? [], job())).toBe(false);

    commit('big.bin', 5000, 'chen');
    expect(await newLargeBlob(raw, 1000, seen ?? [], job())).toBe(true);
    expect(await newLargeBlob(raw, 5000, seen ?? [], job())).toBe(false);
  });

  it('reads everything when a recorded tip is gone from the raw history', async () => {
    const gone = ['0123456789012345678901234567890123456789'];
    expect((await gitAuthors(raw, job().home, gone)).map((a) => a.name)).toEqual(['ada', 'brian', 'chen']);
    expect(await newLargeBlob(raw, 1000, gone, job())).toBe(true);
  });
});
