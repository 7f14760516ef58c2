import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { assignRefNames, isValidRefPath, readableRefPath, refRenames } from '#domain/ref-names';
import { FAST_EXPORT_BRANCH_NAMES } from '#test/fast-export-names';

const branches = (...names: string[]) =>
  names.map((name) => ({ kind: 'branch', name, prefix: 'refs/heads/branches/', path: name }));

const SMOKE = FAST_EXPORT_BRANCH_NAMES;

describe('readableRefPath', () => {
  it('keeps valid names and makes every other one valid', () => {
    expect(readableRefPath('feature/x.y')).toBe('feature/x.y');
    expect(readableRefPath('åäö')).toBe('åäö');
    expect(readableRefPath('Feature- 12V Vac "Venom"')).toBe('Feature-_12V_Vac_"Venom"');
    expect(readableRefPath('/a//b/')).toBe('a/b');
    expect(readableRefPath('.a/b.')).toBe('_a/b_');
    expect(readableRefPath('x.lock/y.lock')).toBe('x_lock/y_lock');
    expect(readableRefPath('a..b@{1}~^:?*[\\\t\u007f')).toBe('a.b@_1}_');
    expect(readableRefPath('/')).toBe('_');
    expect(readableRefPath('@')).toBe('_');
    expect(readableRefPath('bad\ud800')).toBe('bad_');
    expect(Buffer.byteLength(readableRefPath('é'.repeat(150)))).toBe(200);
  });

  it('says which names Git takes as they are', () => {
    expect(isValidRefPath('a.b')).toBe(true);
    expect(isValidRefPath('a/b')).toBe(true);
    expect(isValidRefPath('a/')).toBe(false);
    expect(isValidRefPath('2019 Spring R2')).toBe(false);
    expect(isValidRefPath('')).toBe(false);
  });
});

describe('assignRefNames', () => {
  it('keeps valid names, renames invalid and clashing ones with a hash suffix, and loses none', () => {
    const assigned = assignRefNames(branches('a', ...SMOKE));
    const refs = assigned.map((entry) => entry.ref);
    expect(new Set(refs).size).toBe(refs.length);
    for (const ref of refs) {
      // No ref is a folder of another.
      expect(refs.some((other) => other.startsWith(`${ref}/`))).toBe(false);
      expect(() => execFileSync('git', ['check-ref-format', ref])).not.toThrow();
    }
    const byName = new Map(assigned.map((entry) => [entry.name, entry]));
    for (const kept of ['a', 'a.b', '___3', '__2', '_1', 'åäö']) {
      expect(byName.get(kept)?.ref).toBe(`refs/heads/branches/${kept}`);
      expect(byName.get(kept)?.renamed).toBeUndefined();
    }
    expect(byName.get('a/b')?.renamed).toBe('clash');
    expect(byName.get('a/b')?.ref).toMatch(/^refs\/heads\/branches\/a-b-[0-9a-f]{8}$/);
    expect(byName.get('a?')?.ref).toMatch(/^refs\/heads\/branches\/a_-[0-9a-f]{8}$/);
    expect(byName.get('a?')?.renamed).toBe('invalid');
    expect(byName.get('a.')?.ref).toMatch(/^refs\/heads\/branches\/a_-[0-9a-f]{8}$/);
    expect(byName.get('a.')?.ref).not.toBe(byName.get('a?')?.ref);
    expect(byName.get('a/?')?.ref).toMatch(/^refs\/heads\/branches\/a-_-[0-9a-f]{8}$/);
  });

  it('gives the same refs for the same requests', () => {
    expect(assignRefNames(branches(...SMOKE))).toEqual(assignRefNames(branches(...SMOKE)));
  });

  it('lets the earlier request keep a ref two ask for, across kinds', () => {
    const assigned = assignRefNames([
      { kind: 'branch', name: 'feature', prefix: 'refs/heads/branches/', path: 'feature' },
      { kind: 'bookmark', name: 'branches/feature', prefix: 'refs/heads/', path: 'branches/feature' },
      { kind: 'bookmark', name: 'branches', prefix: 'refs/heads/', path: 'branches' },
    ]);
    expect(assigned.map((entry) => [entry.ref, entry.renamed])).toEqual([
      ['refs/heads/branches/feature', undefined],
      [expect.stringMatching(/^refs\/heads\/branches\/feature-[0-9a-f]{8}$/), 'clash'],
      [expect.stringMatching(/^refs\/heads\/branches-[0-9a-f]{8}$/), 'clash'],
    ]);
    expect(refRenames(assigned)).toEqual([
      { kind: 'bookmark', name: 'branches/feature', ref: assigned[1]?.ref, reason: 'clash' },
      { kind: 'bookmark', name: 'branches', ref: assigned[2]?.ref, reason: 'clash' },
    ]);
  });

  it('counts up when even the hashed name is taken', () => {
    const first = assignRefNames(branches('x y'))[0]?.ref ?? '';
    const taken = first.slice('refs/heads/branches/'.length);
    const assigned = assignRefNames(branches(taken, 'x y'));
    expect(assigned[0]?.ref).toBe(first);
    expect(assigned[1]?.ref).toBe(`${first}-2`);
  });
});
