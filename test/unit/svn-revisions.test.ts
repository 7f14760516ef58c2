import { describe, expect, it } from 'vitest';
import { loggedRevisions } from '#vcs/subversion/revisions';

/** Lines as svn-all-fast-export 1.0.18 writes them (from git's t9151, t9135 and Mercurial's branches dump). */
const LOG = [
  'progress SVN r1 branch main = :1',
  'progress SVN r2 branch main = :2',
  'progress SVN r3 branch left = :1 # from branch main at r1',
  'progress SVN r3 branch left = :3 # merge from :2',
  'progress SVN r4 branch refs/tags/v1 = :2 # from branch main',
  'progress SVN r5 branch left = :5',
  'progress SVN r5 branch main = :6',
  'progress SVN r6 branch left = :0 # delete',
  'progress SVN r7 branch refs/tags/v1 = :0 # delete',
  'progress SVN r7 branch b = :6 # from branch main at r6 => r5',
  'progress SVN r8 branch gone = :0 # delete',
  'progress SVN r9 branch b = :0 # delete',
  'progress SVN r9 branch c = :6 # from branch b at r8',
  'progress SVN r9 branch c = :7',
  'progress Creating annotated tag v1 from ref refs/tags/v1',
  '',
].join('\n');

const entry = (revision: number) => loggedRevisions(LOG).find((logged) => logged.revision === revision);

describe('loggedRevisions (svn-all-fast-export log → revision map)', () => {
  it('maps a revision to the commit it wrote, never to the commit its new branch was copied from', () => {
    expect(entry(3)).toEqual({ revision: 3, mark: '3', kind: 'wrote' });
    expect(entry(9)).toEqual({ revision: 9, mark: '7', kind: 'wrote' });
  });

  it('prefers the commit on main when a revision wrote on several branches', () => {
    expect(entry(5)).toEqual({ revision: 5, mark: '6', kind: 'wrote' });
  });

  it('maps a revision that wrote nothing to the commit holding its state: what it copied, else what it deleted', () => {
    expect(entry(4)).toEqual({ revision: 4, mark: '2', kind: 'copied' });
    expect(entry(7)).toEqual({ revision: 7, mark: '6', kind: 'copied' });
    expect(entry(6)).toEqual({ revision: 6, mark: '5', kind: 'deleted' });
    // r8 deleted a ref the log never made: nothing holds it.
    expect(loggedRevisions(LOG).map((logged) => logged.revision)).toEqual([1, 2, 3, 4, 5, 6, 7, 9]);
  });
});
