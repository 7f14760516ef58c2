import { mkdir, mkdtemp, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeFixtureRepository } from '#local/git-fixtures';
import { serveGitHttp } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc } from '#local/tfvc-origin';

export type OriginKind = 'git' | 'subversion' | 'mercurial' | 'tfvc';
export const ORIGIN_KINDS: readonly OriginKind[] = ['git', 'subversion', 'mercurial', 'tfvc'];

/**
 * One small origin of each kind on 127.0.0.1 (a Git repository over smart HTTP, a Subversion one
 * over svnserve, a Mercurial one over hg serve, a TFVC collection), and the body of
 * `PUT /repos/{owner}/{repo}/import` that imports each.
 */
export async function serveFourOrigins() {
  const work = await mkdtemp(join(tmpdir(), 'four-origins-'));
  await Promise.all([
    makeFixtureRepository(join(work, 'git', 'origin.git'), { commits: 30, branches: 2, annotatedTags: 2 }),
    makeHgFixture(join(work, 'hg')),
    mkdir(join(work, 'svn'))
      .then(() => makeSvnRepository(join(work, 'make-svn')))
      .then((made) => rename(made.path, join(work, 'svn', 'std'))),
  ]);
  const [git, hg, svn, tfvc] = await Promise.all([
    serveGitHttp(join(work, 'git')),
    serveHg({ repo: join(work, 'hg') }),
    serveSvn(join(work, 'svn')),
    serveTfvc({ projects: tfvcHistory(), maxPage: 3 }),
  ]);
  const bodies: Record<OriginKind, Record<string, string>> = {
    git: { vcs_url: `${git.url}/origin.git` },
    subversion: { vcs_url: svn.url('std') },
    mercurial: { vcs_url: `${hg.url}/` },
    tfvc: { vcs_url: tfvc.collectionUrl, vcs: 'tfvc', tfvc_project: 'Alpha' },
  };
  return {
    importBody: (kind: OriginKind) => bodies[kind],
    close: async () => {
      await Promise.all([git.close(), hg.close(), svn.close(), tfvc.close()]);
    },
  };
}
