/**
 * A Subversion root of several projects for tests, made of the third-party dumps in
 * `test/fixtures/svn` (see its README for their origin and licence): each dump is loaded with
 * `svnadmin load --parent-dir <project>` into one repository, so every project is a folder of the
 * root holding its own trunk (and branches or tags), as a server of many projects is. Serve it
 * with `serveSvn` (`svn-origins.ts`) over the directory holding `root`.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DUMPS = fileURLToPath(new URL('../../test/fixtures/svn/', import.meta.url));

/**
 * Dumps whose top level is a project's (a trunk beside branches and/or tags), by the project name
 * the root gives them. Small: each imports in a few seconds.
 */
export const DUMP_PROJECTS = {
  deletion: 'git-t9135-svn.dump',
  retag: 'git-t9136-svn.dump',
  mergeinfo: 'svn-mergeinfo_included_full.dump',
  replace: 'svn-descend-into-replace.dump',
  relabel: 'hg-tags.dump',
  forks: 'hg-branches.dump',
  merges: 'git-t9151-svn-mergeinfo.dump',
} as const;
export type DumpProject = keyof typeof DUMP_PROJECTS;

function run(tool: string, args: readonly string[], home: string, stdinFile?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LC_ALL: 'C' },
      stdio: [stdinFile ? 'pipe' : 'ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    if (stdinFile && child.stdin) createReadStream(stdinFile).pipe(child.stdin);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(' ')}: ${err}`)),
    );
  });
}

/**
 * `<dir>/root`: one repository with the named projects, each loaded from its dump under its own
 * folder. Returns the repository's directory.
 */
export async function makeDumpProjectsRoot(dir: string, projects: readonly DumpProject[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'root');
  const home = await mkdtemp(join(tmpdir(), 'svn-dumps-home-'));
  try {
    await run('svnadmin', ['create', path], home);
    for (const project of projects) {
      await run(
        'svn',
        ['mkdir', '-q', '--non-interactive', '-m', `project ${project}`, `file://${path}/${project}`],
        home,
      );
      await run(
        'svnadmin',
        ['load', '-q', '--parent-dir', project, path],
        home,
        join(DUMPS, DUMP_PROJECTS[project]),
      );
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  return path;
}
