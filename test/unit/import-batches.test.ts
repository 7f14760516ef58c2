import { describe, expect, it } from 'vitest';
import {
  batchConcurrency,
  derivedRepositoryName,
  nameProblems,
  projectChoiceOf,
  releasesSlot,
} from '#domain/import-batches';

describe('derivedRepositoryName', () => {
  it('takes the last segment, replaces what the name rule refuses with -, drops .git', () => {
    expect(derivedRepositoryName('svn://example.com/repos/my project')).toBe('my-project');
    expect(derivedRepositoryName('https://example.com/hg/tools/')).toBe('tools');
    expect(derivedRepositoryName('https://example.com/git/app.git')).toBe('app');
    expect(derivedRepositoryName('https://example.com/x?y=1#z')).toBe('x');
    expect(derivedRepositoryName('Team Project/Ünïcode')).toBe('-n-code');
  });

  it('falls back to a valid name when nothing usable is left', () => {
    expect(derivedRepositoryName('https://example.com/')).toBe('example.com');
    expect(derivedRepositoryName('..')).toBe('repository');
    expect(derivedRepositoryName('')).toBe('repository');
    expect(derivedRepositoryName('a'.repeat(150))).toHaveLength(100);
  });
});

describe('projectChoiceOf', () => {
  it('names a project as each adapter’s detection does', () => {
    expect(projectChoiceOf('subversion', 'alpha')).toEqual({
      vcs: 'subversion',
      humanName: 'alpha',
      path: 'alpha',
    });
    expect(projectChoiceOf('mercurial', 'group/tool/')).toEqual({
      vcs: 'mercurial',
      humanName: 'group/tool',
      path: 'group/tool/',
    });
    expect(projectChoiceOf('tfvc', 'Fabrikam')).toEqual({
      vcs: 'tfvc',
      humanName: 'Fabrikam',
      tfvcProject: 'Fabrikam',
    });
  });

  it('refuses what cannot be a project', () => {
    expect(projectChoiceOf('subversion', 'a/b')).toBeUndefined();
    expect(projectChoiceOf('tfvc', '')).toBeUndefined();
    expect(projectChoiceOf('git', 'x')).toBeUndefined();
  });
});

describe('nameProblems', () => {
  it('reports invalid names and every later use of a name, case-insensitively', () => {
    expect(
      nameProblems([
        { index: 0, repository: 'one' },
        { index: 1, repository: 'bad name' },
        { index: 2, repository: 'ONE' },
        { index: 3, repository: 'two.git' },
      ]),
    ).toEqual([
      expect.objectContaining({ index: 1, field: 'repository', code: 'invalid' }),
      expect.objectContaining({ index: 2, field: 'repository', code: 'already_exists' }),
      expect.objectContaining({ index: 3, field: 'repository', code: 'invalid' }),
    ]);
  });
});

describe('the queue rules', () => {
  it('frees a slot when no worker runs the import', () => {
    expect(['detecting', 'importing', 'mapping', 'pushing'].some((s) => releasesSlot(s as never))).toBe(
      false,
    );
    expect(
      ['complete', 'error', 'auth_failed', 'detection_found_multiple'].every((s) => releasesSlot(s as never)),
    ).toBe(true);
  });

  it('keeps a batch within 1 and the service bound', () => {
    expect(batchConcurrency(undefined, 4)).toBe(4);
    expect(batchConcurrency(2, 4)).toBe(2);
    expect(batchConcurrency(9, 4)).toBe(4);
    expect(batchConcurrency(0, 4)).toBe(1);
  });
});
