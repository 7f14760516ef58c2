/**
 * Subversion roots of several projects built from the real third-party dumps in
 * `test/fixtures/svn` (README there: origins and licences): each project is one dump loaded with
 * `svnadmin load --parent-dir <project>`, so it is `<project>/trunk|branches|tags` as the dump had
 * it at its root, as a server of many projects is. Two shapes: a few named projects
 * (`makeDumpProjectsRoot`), and `count` projects (`makeSvnProjectsRoot`) from the dumps whose root
 * is a standard layout, round-robin, built once per test run (`fixture-cache.ts`) and copied for
 * each use. Serve either with `serveSvn` (svn-origins.ts); `addSvnRevision` commits to one later,
 * for a sync to find.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyOfFixture } from './fixture-cache.ts';

const DUMPS_DIR = fileURLToPath(new URL('../../test/fixtures/svn/', import.meta.url));

/**
 * Dumps whose top level is a project's (a trunk beside branches and/or tags), by the project name
 * `makeDumpProjectsRoot` gives them. Small: each imports in a few seconds.
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

/** The dumps whose root is `trunk` with `branches` and or `tags` beside it, and nothing else. */
export const STANDARD_LAYOUT_DUMPS = [
  'git-t9135-svn.dump', // trunk, branches: a branch deleted and copied again from another
  'git-t9136-svn.dump', // trunk, branches, tags: a tag deleted and made again
  'svn-descend-into-replace.dump', // trunk, branches, tags: a replaced directory
  'svn-mergeinfo_included_full.dump', // trunk, branches: merges with svn:mergeinfo
  'hg-branches.dump', // trunk, branches: a file directly in branches/, a branch moved away and back
  'git-t9151-svn-mergeinfo.dump', // trunk, branches, tags: 44 revisions, nine branches
] as const;

/** A fixed UUID, so every build is the same repository to an importer. */
const UUID = '37d5a1b0-0b5e-4c1e-9a37-000000000037';

const env = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LC_ALL: 'C' });

function run(tool: string, args: readonly string[], home: string, stdinFile?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, {
      env: env(home),
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

/** `project-01` … : the names the root's projects get. */
export const projectNames = (count: number): string[] =>
  Array.from({ length: count }, (_, index) => `project-${String(index + 1).padStart(2, '0')}`);

/** Which dump project `index` (0-based) was loaded from. */
export const dumpOfProject = (index: number): string =>
  STANDARD_LAYOUT_DUMPS[index % STANDARD_LAYOUT_DUMPS.length] ?? STANDARD_LAYOUT_DUMPS[0];

/** `repo`: a new repository (a fixed UUID) holding each project, loaded from its dump under its name. */
async function loadProjects(
  repo: string,
  projects: readonly { readonly name: string; readonly dump: string }[],
): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), 'svn-projects-home-'));
  try {
    await run('svnadmin', ['create', repo], home);
    await run('svnadmin', ['setuuid', repo, UUID], home);
    // One revision makes every project's folder (load --parent-dir needs it to exist).
    await run(
      'svnmucc',
      [
        '-U',
        `file://${repo}`,
        '-m',
        'Project folders',
        '--username',
        'admin',
        ...projects.flatMap(({ name }) => ['mkdir', name]),
      ],
      home,
    );
    for (const { name, dump } of projects)
      await run(
        'svnadmin',
        ['load', '--quiet', '--no-flush-to-disk', '--ignore-uuid', '--parent-dir', name, repo],
        home,
        join(DUMPS_DIR, dump),
      );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * `<dir>/root`: one repository with the named projects, each loaded from its dump under its own
 * folder. Returns the repository's directory.
 */
export async function makeDumpProjectsRoot(dir: string, projects: readonly DumpProject[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'root');
  await loadProjects(
    path,
    projects.map((name) => ({ name, dump: DUMP_PROJECTS[name] })),
  );
  return path;
}

/** Makes `dest` a Subversion repository of `count` projects (`projectNames(count)`), each from a real dump. */
export async function makeSvnProjectsRoot(dest: string, count = 20): Promise<void> {
  const projects = projectNames(count).map((name, index) => ({ name, dump: dumpOfProject(index) }));
  await copyOfFixture(`svn-projects-root-${count}`, (dir) => loadProjects(dir, projects), dest);
}

/**
 * Commits one new file to `<project>/trunk` of the repository at `repo` (through `file://`, as a
 * committer on the origin would): one new revision per project, for a sync to bring in.
 */
export async function addSvnRevision(
  repo: string,
  project: string,
  file: string,
  content: string,
): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), 'svn-projects-home-'));
  try {
    const body = join(home, 'body');
    await writeFile(body, content);
    await run(
      'svnmucc',
      [
        '-U',
        `file://${repo}`,
        '-m',
        `Add ${file} to ${project}`,
        '--username',
        'committer',
        'put',
        body,
        `${project}/trunk/${file}`,
      ],
      home,
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
