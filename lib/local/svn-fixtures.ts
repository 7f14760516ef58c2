/**
 * Subversion repositories for tests, built with `svnadmin create` and `svn` commits over `file://`
 * (no server): a standard layout (trunk, a branch, a tag, a merge back to trunk with
 * `svn:mergeinfo`, `svn:ignore`, `svn:executable`, several authors, an optional large file) or a
 * root holding several such projects. Authors are set per commit with `--username` (file:// takes
 * the name as given); dates are left as svn made them.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const svnEnv = (home: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  LC_ALL: 'C',
});

function run(tool: string, cwd: string, home: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { cwd, env: svnEnv(home), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${tool} ${args.join(' ')}: ${err}`)),
    );
  });
}

export const SVN_FIXTURE_AUTHORS = ['ada', 'bob', 'carl'] as const;

export interface SvnProjectSpec {
  /** Adds `big.bin` of this many bytes on trunk (one more revision). */
  readonly largeFileBytes?: number;
}

export interface SvnRepositorySpec extends SvnProjectSpec {
  /** Several projects under the root (`<name>/{trunk,branches,tags}`) instead of one standard layout. */
  readonly projects?: readonly string[];
  /** No trunk/branches/tags: files straight in the root. */
  readonly flat?: boolean;
}

export interface SvnRepository {
  /** The repository directory (what `svnserve -r` or `svnadmin` takes). */
  readonly path: string;
  /** `file://` URL of the repository root. */
  readonly url: string;
  readonly uuid: string;
  readonly youngest: number;
}

/**
 * Per project, in order: `trunk/{branches,tags}` skeleton (ada); trunk files `README` and an
 * executable `run.sh`, `svn:ignore` of `*.log` on the project's trunk (ada); branch
 * `branches/feature` copied from trunk (bob); a change on the branch (bob); a change on trunk
 * (carl); tag `tags/v1.0` copied from trunk (carl); the branch merged into trunk with `svn merge`
 * (ada, sets `svn:mergeinfo`); optionally `big.bin` on trunk (bob).
 */
export async function makeSvnRepository(dir: string, spec: SvnRepositorySpec = {}): Promise<SvnRepository> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'repo');
  const home = await mkdtemp(join(tmpdir(), 'svn-fixture-home-'));
  const svn = (cwd: string, ...args: string[]) =>
    run('svn', cwd, home, [
      '--non-interactive',
      '--no-auth-cache',
      '--config-dir',
      join(home, 'cfg'),
      ...args,
    ]);
  try {
    await run('svnadmin', dir, home, ['create', path]);
    const url = `file://${path}`;
    const wc = join(dir, 'wc');
    await rm(wc, { recursive: true, force: true });
    await svn(dir, 'checkout', '--username', 'ada', url, wc);
    const commit = (user: string, message: string) => svn(wc, 'commit', '--username', user, '-m', message);
    const update = () => svn(wc, 'update');

    if (spec.flat) {
      await writeFile(join(wc, 'README'), 'flat\n');
      await svn(wc, 'add', 'README');
      await commit('ada', 'Flat tree');
      await writeFile(join(wc, 'README'), 'flat\nmore\n');
      await commit('bob', 'More');
    } else {
      for (const project of spec.projects ?? ['']) {
        const base = project === '' ? wc : join(wc, project);
        const rel = (sub: string) => (project === '' ? sub : `${project}/${sub}`);
        await mkdir(base, { recursive: true });
        if (project !== '') await svn(wc, 'add', '--depth=empty', project);
        for (const sub of ['trunk', 'branches', 'tags']) {
          await mkdir(join(base, sub));
          await svn(wc, 'add', rel(sub));
        }
        await commit('ada', `Layout ${project}`.trim());
        await writeFile(join(base, 'trunk', 'README'), `Project ${project || 'root'}\n`);
        await writeFile(join(base, 'trunk', 'run.sh'), '#!/bin/sh\necho run\n');
        await chmod(join(base, 'trunk', 'run.sh'), 0o755);
        await svn(wc, 'add', rel('trunk/README'), rel('trunk/run.sh'));
        await svn(wc, 'propset', 'svn:executable', '*', rel('trunk/run.sh'));
        await svn(wc, 'propset', 'svn:ignore', '*.log\n', rel('trunk'));
        await commit('ada', 'Files');
        await svn(
          wc,
          'copy',
          '--username',
          'bob',
          '-m',
          'Branch feature',
          `${url}/${rel('trunk')}`,
          `${url}/${rel('branches/feature')}`,
        );
        await update();
        await writeFile(join(base, 'branches', 'feature', 'feature.txt'), 'feature\n');
        await svn(wc, 'add', rel('branches/feature/feature.txt'));
        await commit('bob', 'Feature work');
        await writeFile(join(base, 'trunk', 'README'), `Project ${project || 'root'}\ntrunk change\n`);
        await commit('carl', 'Trunk change');
        await svn(
          wc,
          'copy',
          '--username',
          'carl',
          '-m',
          'Tag v1.0',
          `${url}/${rel('trunk')}`,
          `${url}/${rel('tags/v1.0')}`,
        );
        await update();
        await svn(join(base, 'trunk'), 'merge', `^/${rel('branches/feature')}`);
        await commit('ada', 'Merge feature');
        if (spec.largeFileBytes !== undefined) {
          await writeFile(join(base, 'trunk', 'big.bin'), Buffer.alloc(spec.largeFileBytes, 7));
          await svn(wc, 'add', rel('trunk/big.bin'));
          await commit('bob', 'Large file');
        }
        await update();
      }
    }
    const uuid = (await run('svnlook', dir, home, ['uuid', path])).trim();
    const youngest = Number((await run('svnlook', dir, home, ['youngest', path])).trim());
    await rm(wc, { recursive: true, force: true });
    return { path, url, uuid, youngest };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
