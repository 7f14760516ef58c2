import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { decodeXml } from '#vcs/subversion/command';

/**
 * The revision map of Subversion imports over svn:// (issue 35, item 1), checked against
 * `svn log -v` of each origin, on third-party dumps (git's t9151, t9135 and t9136, Mercurial's
 * branches and tags dumps, Subversion's descend-into-replace) and one built here with svn itself
 * (a branch made from an older trunk, a revision changing trunk and a branch, a branch replaced
 * twice, a property set on trunk alone, a tag made and deleted).
 *
 * - Every revision that changes trunk, a branch or a tag names the commit that revision made:
 *   its message and author date are the revision's, and its files are `svn export` of that folder
 *   at that revision (`.gitignore`, which carries `svn:ignore`, set apart).
 * - A revision that made no commit (it only deleted a branch or tag) names the commit that holds
 *   what it deleted: the folder's files just before it.
 */

const exec = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '../fixtures/svn');
const DUMPS = [
  'git-t9151-svn-mergeinfo',
  'git-t9135-svn',
  'git-t9136-svn',
  'hg-branches',
  'hg-tags',
  'svn-descend-into-replace',
] as const;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let parent: string;
let svnserve: SvnServer;

const env = () => ({ PATH: process.env.PATH, HOME: work, LC_ALL: 'C' });
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const originUrl = (name: string) => `file://${join(parent, name)}`;

/**
 * Built with svn's own commands: trunk, a branch made from an older trunk, one revision changing
 * trunk and the branch, the branch replaced (once as it was copied, once with a new file), a
 * property set on trunk alone, a tag made and deleted.
 */
async function makeBuiltRepository(name: string): Promise<void> {
  const path = join(parent, name);
  const url = originUrl(name);
  const svn = (...args: string[]) =>
    exec('svn', ['--non-interactive', '--username', 'ada', ...args], { env: env(), cwd: work });
  const mucc = (message: string, ...args: string[]) =>
    exec('svnmucc', ['--non-interactive', '--username', 'bob', '-m', message, '-U', url, ...args], {
      env: env(),
      cwd: work,
    });
  await exec('svnadmin', ['create', path], { env: env() });
  await svn('mkdir', '-m', 'Layout', `${url}/trunk`, `${url}/branches`, `${url}/tags`);
  const files = await mkdtemp(join(work, 'built-'));
  await writeFile(join(files, 'a.txt'), 'a\n');
  await writeFile(join(files, 'b.txt'), 'b\n');
  await svn('import', '-m', 'Two files', files, `${url}/trunk`);
  const wc = join(await mkdtemp(join(work, 'wc-')), 'root');
  await svn('checkout', '-q', url, wc);
  await writeFile(join(wc, 'trunk/a.txt'), 'a\na2\n');
  await svn('commit', '-m', 'Trunk moves on', wc);
  await svn('copy', '-m', 'Branch old from trunk at r2', `${url}/trunk@2`, `${url}/branches/old`);
  await svn('update', '-q', wc);
  await writeFile(join(wc, 'trunk/b.txt'), 'b\non trunk\n');
  await writeFile(join(wc, 'branches/old/b.txt'), 'b\non the branch\n');
  await svn('commit', '-m', 'One change on trunk and one on the branch\n\nin one revision', wc);
  await mucc('Replace the branch with trunk', 'rm', 'branches/old', 'cp', 'HEAD', 'trunk', 'branches/old');
  const extra = join(files, 'c.txt');
  await writeFile(extra, 'c\n');
  await mucc(
    'Replace the branch again, with a new file',
    'rm',
    'branches/old',
    'cp',
    '3',
    'trunk',
    'branches/old',
    'put',
    extra,
    'branches/old/c.txt',
  );
  await mucc('A property Git does not keep', 'propset', 'team:owner', 'ada', 'trunk');
  await mucc('Tag v1', 'cp', 'HEAD', 'trunk', 'tags/v1');
  await mucc('Tag v1 deleted', 'rm', 'tags/v1');
}

interface Change {
  readonly action: string;
  readonly kind: string;
  readonly path: string;
}
interface LogEntry {
  readonly revision: number;
  readonly date: string;
  readonly message: string;
  readonly changes: readonly Change[];
}

/** `svn log -v --xml` of the origin, oldest first. */
async function svnLog(name: string): Promise<LogEntry[]> {
  const { stdout } = await exec('svn', ['log', '-v', '--xml', '--non-interactive', originUrl(name)], {
    env: env(),
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...stdout.matchAll(/<logentry\s+revision="(\d+)">([\s\S]*?)<\/logentry>/g)]
    .map(([, revision = '', body = '']) => ({
      revision: Number(revision),
      date: /<date>([^<]*)<\/date>/.exec(body)?.[1] ?? '',
      message: decodeXml(/<msg>([\s\S]*?)<\/msg>/.exec(body)?.[1] ?? ''),
      changes: [...body.matchAll(/<path\b([^>]*)>([^<]*)<\/path>/g)].map(
        ([, attributes = '', path = '']) => ({
          action: /\baction="(\w)"/.exec(attributes)?.[1] ?? '',
          kind: /\bkind="(\w*)"/.exec(attributes)?.[1] ?? '',
          path: decodeXml(path),
        }),
      ),
    }))
    .sort((a, b) => a.revision - b.revision);
}

/** The branch or tag folder (`trunk`, `branches/X`, `tags/X`) a changed path is in, if any. */
const folderOf = (change: Change): string | undefined => {
  const match = /^\/(trunk|(?:branches|tags)\/[^/]+)(\/.*)?$/.exec(change.path);
  if (match === null) return undefined;
  // A file straight under branches/ or tags/ is no branch or tag.
  if (match[1] !== 'trunk' && match[2] === undefined && change.kind === 'file') return undefined;
  return match[1];
};

interface Expected {
  readonly revision: number;
  /** The folder whose files the mapped commit holds, and at which revision. */
  readonly folder: string;
  readonly at: number;
  /** Whether the revision made a commit (else it names the commit holding its state). */
  readonly made: boolean;
  readonly entry: LogEntry;
}

/**
 * What the map must hold, from the log alone: each revision touching a branch or tag folder,
 * with the folder (trunk first, else the first it touched that still exists). It made a commit
 * unless it only deleted whole folders (a property change alone makes one too, with no change
 * to the files); then it names the commit that held the first folder it deleted.
 */
function expectedMap(log: readonly LogEntry[]): Expected[] {
  return log.flatMap((entry): Expected[] => {
    const touched = entry.changes.flatMap((change) => {
      const folder = folderOf(change);
      return folder === undefined ? [] : [{ folder, change }];
    });
    if (touched.length === 0) return [];
    const kept = touched.filter((t) => !(t.change.action === 'D' && t.change.path === `/${t.folder}`));
    const pick = (from: readonly { folder: string }[]) =>
      from.find((t) => t.folder === 'trunk')?.folder ?? from[0]?.folder ?? '';
    return kept.length > 0
      ? [{ revision: entry.revision, folder: pick(kept), at: entry.revision, made: true, entry }]
      : [{ revision: entry.revision, folder: pick(touched), at: entry.revision - 1, made: false, entry }];
  });
}

/** Every file under `dir` → its content, `.git` and `.gitignore` left out. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === '.gitignore') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out[relative(dir, path)] = await readFile(path, 'utf8');
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

async function originFiles(name: string, folder: string, revision: number) {
  const dir = join(await mkdtemp(join(work, 'export-')), 'tree');
  await exec(
    'svn',
    ['export', '--quiet', '--non-interactive', `${originUrl(name)}/${folder}@${revision}`, dir],
    {
      env: env(),
    },
  );
  return filesUnder(dir);
}

async function hostedFiles(clone: string, commit: string) {
  const dir = await mkdtemp(join(work, 'tree-'));
  const archive = await git(['archive', '--format=tar', '-o', join(dir, 'tree.tar'), commit], { cwd: clone });
  expect(archive.code, archive.stderr).toBe(0);
  const tree = join(dir, 'tree');
  await mkdir(tree);
  await exec('tar', ['-xf', join(dir, 'tree.tar'), '-C', tree]);
  return filesUnder(tree);
}

async function importOf(name: string): Promise<string> {
  const repo = `map-${name}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const put = await api('PUT', `/repos/octocat/${repo}/import`, {
    vcs_url: svnserve.url(name),
    vcs: 'subversion',
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  const deadline = Date.now() + 90_000;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === 'complete') return repo;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${name} did not complete: ${JSON.stringify(last)}`);
}

async function revisionMap(repo: string): Promise<Map<number, string>> {
  const page = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
  expect(page.status).toBe(200);
  expect(page.headers.get('link') ?? '').not.toContain('rel="next"');
  return new Map(
    (page.body as { origin_revision: string; commit: string }[]).map((e) => [
      Number(e.origin_revision),
      e.commit,
    ]),
  );
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'svn-map-e2e-'));
  parent = join(work, 'repos');
  await mkdir(parent);
  for (const name of DUMPS) {
    await exec('svnadmin', ['create', join(parent, name)], { env: env() });
    await exec('svnadmin', ['load', '-q', '-F', join(FIXTURES, `${name}.dump`), join(parent, name)], {
      env: env(),
    });
  }
  await makeBuiltRepository('built');
  svnserve = await serveSvn(parent);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await svnserve?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe.concurrent('GET /repos/:owner/:repo/import/revisions (Subversion origin, svn://)', () => {
  it.each([...DUMPS, 'built'])(
    'maps every revision of %s that changes a branch or tag to the commit it made, or that holds its state',
    async (name) => {
      const repo = await importOf(name);
      const expected = expectedMap(await svnLog(name));
      const map = await revisionMap(repo);
      const clone = await mkdtemp(join(work, 'clone-'));
      const cloned = await git(['clone', '-q', '--mirror', `${stack.webUrl}/octocat/${repo}.git`, clone]);
      expect(cloned.code, cloned.stderr).toBe(0);

      expect([...map.keys()], name).toEqual(expected.map((e) => e.revision));
      for (const want of expected) {
        const commit = map.get(want.revision) ?? '';
        const where = `${name} r${want.revision} ${want.folder}`;
        const shown = await git(['show', '-s', '--format=%at%n%B', commit], { cwd: clone });
        expect(shown.code, `${where}: ${shown.stderr}`).toBe(0);
        const [seconds = '', ...message] = shown.stdout.split('\n');
        if (want.made) {
          expect(message.join('\n').trimEnd(), where).toBe(want.entry.message.trimEnd());
          expect(Number(seconds), where).toBe(Math.floor(Date.parse(want.entry.date) / 1000));
        }
        expect(await hostedFiles(clone, commit), where).toEqual(
          await originFiles(name, want.folder, want.at),
        );
      }
    },
    150_000,
  );
});
