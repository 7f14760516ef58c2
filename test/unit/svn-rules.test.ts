import { describe, expect, it } from 'vitest';
import { conversionRules, svnRefNames } from '#vcs/subversion/rules';

describe('Subversion branch and tag refs', () => {
  it('gives trunk main, keeps valid names, renames the rest (with # and whitespace), in a fixed order', () => {
    const names = { branches: ['z', 'a#b', 'main', 'branches', '-x'], tags: ['v1.lock', 'v1'] };
    const refs = (layout: typeof names) =>
      svnRefNames(layout).map(({ name, ref, renamed }) => [name, ref, renamed]);
    expect(refs(names)).toEqual([
      ['trunk', 'refs/heads/main', undefined],
      ['main', 'refs/heads/branches/main', undefined],
      ['-x', 'refs/heads/-x', undefined],
      ['a#b', expect.stringMatching(/^refs\/heads\/a_b-[0-9a-f]{8}$/), 'invalid'],
      // `branches/main` holds the folder `branches`.
      ['branches', expect.stringMatching(/^refs\/heads\/branches-[0-9a-f]{8}$/), 'clash'],
      ['z', 'refs/heads/z', undefined],
      ['v1', 'refs/tags/v1', undefined],
      ['v1.lock', expect.stringMatching(/^refs\/tags\/v1_lock-[0-9a-f]{8}$/), 'invalid'],
    ]);
    expect(refs({ branches: [...names.branches].reverse(), tags: [...names.tags].reverse() })).toEqual(
      refs(names),
    );
  });

  it('writes one exact rule per name the generic rules cannot carry, before them', () => {
    const { rules, renames } = conversionRules(
      'pro ject',
      { branches: ['ok', 'ü 1', '-x'], tags: ['.t'] },
      'raw.git',
    );
    const own = renames.map((rename) => rename.ref);
    expect(rules).toContain(
      `match /pro\\x0020ject/branches/\\x00fc\\x00201/\n  repository raw.git\n  branch ${own[0]?.slice('refs/heads/'.length)}\nend match\n`,
    );
    expect(rules).toContain(
      `match /pro\\x0020ject/tags/\\x002et/\n  repository raw.git\n  branch ${own[1]}\n  annotated true\nend match\n`,
    );
    expect(rules).toContain(
      'match /pro\\x0020ject/branches/\\x002dx/\n  repository raw.git\n  branch -x\nend match\n',
    );
    expect(rules).not.toContain('branches/ok/');
    expect(rules.indexOf('\\x002dx')).toBeLessThan(rules.indexOf('match /pro\\x0020ject/branches/main/'));
    const whole = conversionRules('', undefined, 'raw.git');
    expect(whole.renames).toEqual([]);
    const blocks = whole.rules.split('\n\n');
    expect(blocks[0]).toBe('create repository raw.git\nend repository');
    // First of all, the rule that drops paths Git must not store (issue 28).
    expect(blocks[1]).toMatch(/^match \/\(\?:\.\*\/\)\?\(\?:.*\(\?:\/\|\$\)\nend match$/);
    expect(blocks.slice(2).join('\n\n')).toBe(
      'match /\n  repository raw.git\n  branch main\nend match\n\nmatch /\nend match\n',
    );
  });
});
