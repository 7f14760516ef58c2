import { describe, expect, it } from 'vitest';
import { loggedRevisions } from '#vcs/subversion/revisions';

/** Lines as svn-all-fast-export 1.0.18 writes them with `--svn-branches` (from git's t9151 and t9135). */
const LOG = [
  'progress SVN r1 branch main = :1',
  'progress SVN r2 branch main = :2',
  'progress SVN r3 branch left = :1 # from branch main at r1',
  'progress SVN r3 branch left = :3 # merge from :2',
  'progress SVN r4 branch refs/tags/v1 = :2 # from branch main',
  'progress SVN r4 branch refs/tags/v1 = :4',
  'progress SVN r5 branch left = :5',
  'progress SVN r5 branch main = :6',
  'progress SVN r6 branch left = :0 # delete',
  'progress SVN r7 branch refs/tags/v1 = :0 # delete',
  'progress SVN r7 branch b = :6 # from branch main at r6 => r5',
  'progress SVN r7 branch b = :7',
  'progress SVN r8 branch gone = :0 # delete',
  'progress Creating annotated tag v1 from ref refs/tags/v1',
  '',
].join('\n');

describe('loggedRevisions (svn-all-fast-export log → revision map)', () => {
  it('maps a revision to the commit it wrote, never to the commit a branch or tag was copied from', () => {
    const byRevision = new Map(loggedRevisions(LOG).map((entry) => [entry.revision, entry]));
    expect(byRevision.get(3)).toEqual({ revision: 3, mark: '3', deleted: false });
    expect(byRevision.get(4)).toEqual({ revision: 4, mark: '4', deleted: false });
    expect(byRevision.get(7)).toEqual({ revision: 7, mark: '7', deleted: false });
  });

  it('prefers the commit on main when a revision wrote on several branches', () => {
    expect(loggedRevisions(LOG).find((entry) => entry.revision === 5)?.mark).toBe('6');
  });

  it('maps a revision that only deleted a branch to the commit it deleted; one that deleted nothing known is left out', () => {
    const entries = loggedRevisions(LOG);
    expect(entries.find((entry) => entry.revision === 6)).toEqual({ revision: 6, mark: '5', deleted: true });
    expect(entries.map((entry) => entry.revision)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
