/**
 * The object database read from its files (`object-database.ts`) says what `git count-objects -v`
 * says, field for field: on Lua's history (test/fixtures/git), then with loose objects, more packs,
 * a version 1 index, and a pack whose index is not written yet; and on an empty repository.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectDatabase, objectTotal } from '#vcs/object-database';

const run = promisify(execFile);
const BUNDLE = join(import.meta.dirname, '..', 'fixtures', 'git', 'lua-5.2.0.bundle');

let root: string;
const git = async (repo: string, args: string[], input?: string) => {
  const child = run('git', ['--git-dir', repo, ...args], {
    maxBuffer: 64 << 20,
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Ada',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_COMMITTER_NAME: 'Ada',
      GIT_COMMITTER_EMAIL: 'ada@example.com',
    },
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return (await child).stdout.trim();
};

/** git's own answer, in the same fields. */
async function countObjects(repo: string) {
  const text = await git(repo, ['count-objects', '-v']);
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1]);
  return {
    loose: field('count'),
    looseKiB: field('size'),
    inPack: field('in-pack'),
    packKiB: field('size-pack'),
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'object-database-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('objectDatabase', () => {
  it('says what git count-objects -v says of an empty repository', async () => {
    const repo = join(root, 'empty.git');
    await run('git', ['init', '--bare', '-q', repo]);
    expect(await objectDatabase(repo)).toEqual(await countObjects(repo));
    expect(await objectTotal(repo)).toBe(0);
  });

  it('says what git count-objects -v says of a real history, packed, loose and mixed', async () => {
    const repo = join(root, 'lua.git');
    await run('git', ['init', '--bare', '-q', repo]);
    await git(repo, ['fetch', '-q', BUNDLE, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*']);
    const packed = await countObjects(repo);
    expect(packed.inPack).toBeGreaterThan(1000);
    expect(await objectDatabase(repo)).toEqual(packed);

    // Loose objects beside the pack: blobs of every size.
    for (let i = 0; i < 40; i++) {
      const content = `blob ${i}\n${'x'.repeat(i * 997)}`;
      await writeFile(join(root, 'blob'), content);
      await git(repo, ['hash-object', '-w', join(root, 'blob')]);
    }
    const mixed = await countObjects(repo);
    expect(mixed.loose).toBe(40);
    expect(await objectDatabase(repo)).toEqual(mixed);

    // The loose objects in a second pack, with a version 1 index.
    const ids = (await git(repo, ['rev-list', '--objects', '--all']))
      .split('\n')
      .slice(0, 300)
      .map((line) => line.split(' ')[0]);
    const name = await git(
      repo,
      ['pack-objects', '-q', '--index-version=1', join(repo, 'objects', 'pack', 'pack')],
      `${ids.join('\n')}\n`,
    );
    expect(name).toMatch(/^[0-9a-f]{40}$/);
    const twoPacks = await countObjects(repo);
    expect(twoPacks.inPack).toBe(packed.inPack + 300);
    expect(await objectDatabase(repo)).toEqual(twoPacks);

    // A pack whose index is not written yet is not counted, by git or here.
    await writeFile(join(repo, 'objects', 'pack', 'tmp_pack_incoming.pack'), 'PACK');
    await writeFile(
      join(repo, 'objects', 'pack', 'pack-0000000000000000000000000000000000000000.pack'),
      'PACK',
    );
    expect(await objectDatabase(repo)).toEqual(await countObjects(repo));
    expect(await objectTotal(repo)).toBe(twoPacks.loose + twoPacks.inPack);
  });
});
