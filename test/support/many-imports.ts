import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc } from '#local/tfvc-origin';
import { importApiCall } from './import-api.ts';

/**
 * Many imports at once (issue 36, item 4): `perKind` distinct origins of each of the four kinds,
 * each with a history of its own (a Git fixture of its own length; the Subversion, Mercurial and
 * TFVC fixtures with one more change naming the origin), so that an import showing another's
 * history, or a file of another's work, differs from the same import run alone.
 */

const run = promisify(execFile);

export type OriginKind = 'git' | 'svn' | 'hg' | 'tfvc';

export interface ManyOrigin {
  /** `git-0`, `svn-3`, …: also the stem of the repositories imported from it. */
  readonly name: string;
  readonly kind: OriginKind;
  /** The body of `PUT /repos/{owner}/{repo}/import`. */
  readonly request: Readonly<Record<string, unknown>>;
}

export interface ManyOrigins {
  readonly origins: readonly ManyOrigin[];
  close(): Promise<void>;
}

const toolEnv = (home: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  HGRCPATH: '',
  HGPLAIN: '1',
  LC_ALL: 'C',
});

export async function makeManyOrigins(work: string, perKind: number): Promise<ManyOrigins> {
  const indexes = Array.from({ length: perKind }, (_, i) => i);
  const gitRoot = join(work, 'git');
  const svnRoot = join(work, 'svn');
  await Promise.all([
    ...indexes.map((i) =>
      makeFixtureRepository(join(gitRoot, `git-${i}.git`), { commits: 4 + i, branches: 1, annotatedTags: 1 }),
    ),
    ...indexes.map(async (i) => {
      const made = await makeSvnRepository(join(svnRoot, `svn-${i}`));
      const file = join(work, `svn-${i}.txt`);
      await writeFile(file, `Subversion origin ${i}\n`);
      await run(
        'svnmucc',
        ['--username', 'ada', '-m', `Origin ${i}`, 'put', file, `${made.url}/trunk/origin.txt`],
        { env: toolEnv(work) },
      );
    }),
    ...indexes.map(async (i) => {
      const repo = join(work, 'hg', `hg-${i}`);
      await makeHgFixture(repo);
      await writeFile(join(repo, 'origin.txt'), `Mercurial origin ${i}\n`);
      for (const args of [
        ['add', 'origin.txt'],
        ['commit', '-m', `Origin ${i}`, '-u', 'Ada Lovelace <ada@example.com>', '-d', `${1700001000 + i} 0`],
      ])
        await run('hg', ['--cwd', repo, ...args], { env: toolEnv(work) });
    }),
  ]);
  const servers: { close(): Promise<void> }[] = [];
  try {
    const gitOrigin: OriginServer = await serveGitHttp(gitRoot);
    servers.push(gitOrigin);
    const svnOrigin: SvnServer = await serveSvn(svnRoot);
    servers.push(svnOrigin);
    const hgOrigins = await Promise.all(indexes.map((i) => serveHg({ repo: join(work, 'hg', `hg-${i}`) })));
    servers.push(...hgOrigins);
    const tfvcOrigins = await Promise.all(
      indexes.map((i) => {
        const [alpha] = tfvcHistory();
        if (!alpha) throw new Error('the TFVC fixture has no project');
        const [ada] = alpha.changesets.map((changeset) => changeset.author);
        if (!ada) throw new Error('the TFVC fixture has no changeset');
        const mine = {
          ...alpha,
          changesets: [
            ...alpha.changesets,
            {
              id: 11 + i,
              author: ada,
              date: `2024-02-0${(i % 9) + 1}T09:00:00.000Z`,
              comment: `Origin ${i}`,
              changes: [
                { path: 'origin.txt', changeType: 'add, edit, encoding', content: `TFVC origin ${i}\n` },
              ],
            },
          ],
        };
        return serveTfvc({ projects: [mine] });
      }),
    );
    servers.push(...tfvcOrigins);
    const origins: ManyOrigin[] = indexes.flatMap((i) => [
      { name: `git-${i}`, kind: 'git', request: { vcs_url: `${gitOrigin.url}/git-${i}.git` } },
      { name: `svn-${i}`, kind: 'svn', request: { vcs_url: svnOrigin.url(`svn-${i}/repo`) } },
      { name: `hg-${i}`, kind: 'hg', request: { vcs_url: hgOrigins[i]?.url } },
      {
        name: `tfvc-${i}`,
        kind: 'tfvc',
        request: { vcs_url: tfvcOrigins[i]?.collectionUrl, vcs: 'tfvc', tfvc_project: 'Alpha' },
      },
    ]);
    return { origins, close: () => Promise.all(servers.map((server) => server.close())).then(() => {}) };
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    throw error;
  }
}

export interface ImportsClient {
  readonly baseUrl: string;
  readonly token: string;
  readonly owner: string;
}

const call = (client: ImportsClient, method: string, path: string, body?: unknown) =>
  importApiCall(client.baseUrl, client.token, method, path, body);

/** Creates the repository and starts its import from `origin`. */
export async function startImport(client: ImportsClient, repo: string, origin: ManyOrigin): Promise<void> {
  const created = await fetch(`${client.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${client.token}` },
    body: JSON.stringify({ name: repo }),
  });
  if (created.status !== 201) throw new Error(`${repo}: creating the repository answered ${created.status}`);
  const started = await call(client, 'PUT', `/repos/${client.owner}/${repo}/import`, origin.request);
  if (started.status !== 201) {
    throw new Error(
      `${repo}: starting the import answered ${started.status} ${JSON.stringify(started.body)}`,
    );
  }
}

/** Polls the import until it is `complete`; an error status, or the time running out, throws. */
export async function untilComplete(
  client: ImportsClient,
  repo: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await call(client, 'GET', `/repos/${client.owner}/${repo}/import`)).body;
    if (last.status === 'complete') return last;
    if (last.status === 'error' || String(last.status).endsWith('_failed')) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the import of ${repo} ended ${JSON.stringify(last)}`);
}

/** What a client sees of a complete import, with the repository's name written `{repo}`. */
export interface ImportOutcome {
  readonly refs: readonly string[];
  readonly progress: unknown;
  readonly revisions: readonly unknown[];
  readonly authors: readonly unknown[];
  readonly report: unknown;
}

/** Every page of a list, following the `next` links. */
async function allPages(client: ImportsClient, path: string): Promise<unknown[]> {
  const entries: unknown[] = [];
  let next: string | undefined = `${path}?per_page=100`;
  while (next) {
    const page = await call(client, 'GET', next);
    if (page.status !== 200) throw new Error(`${next} answered ${page.status}`);
    entries.push(...(page.body as unknown[]));
    const link = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    next = link?.slice(client.baseUrl.length);
  }
  return entries;
}

/**
 * The import as its client reads it: the hosted repository's refs (`ls-remote` through the front
 * end), the progress body, the whole revision map, the authors (without their ids and URLs, which
 * the service numbers for every import) and the report.
 */
export async function importOutcome(
  client: ImportsClient,
  repo: string,
  refsOf: (repo: string) => Promise<readonly string[]>,
): Promise<ImportOutcome> {
  const base = `/repos/${client.owner}/${repo}/import`;
  const [refs, progress, revisions, authors, report] = await Promise.all([
    refsOf(repo),
    call(client, 'GET', base).then((answer) => answer.body),
    allPages(client, `${base}/revisions`),
    allPages(client, `${base}/authors`),
    call(client, 'GET', `${base}/report`).then((answer) => answer.body),
  ]);
  const named = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll(repo, '{repo}')) as T;
  return {
    refs,
    progress: named(progress),
    revisions: named(revisions),
    authors: named(
      (authors as Record<string, unknown>[]).map(
        ({ id: _id, url: _url, import_url: _importUrl, ...rest }) => rest,
      ),
    ),
    report: named(report),
  };
}

/**
 * Each origin's import among many equals its import alone (refs, progress, revision map, authors,
 * report), and no two of the histories are alike: an import that took another's would not pass unseen.
 */
export async function expectEachAsAlone(
  client: ImportsClient,
  origins: ManyOrigins,
  refsOf: (repo: string) => Promise<string[]>,
): Promise<void> {
  const seen = new Set<string>();
  for (const origin of origins.origins) {
    const many = await importOutcome(client, `${origin.name}-many`, refsOf);
    const alone = await importOutcome(client, `${origin.name}-alone`, refsOf);
    expect(many.refs.length, origin.name).toBeGreaterThan(0);
    expect(many.revisions.length, origin.name).toBeGreaterThan(0);
    expect(many.authors.length, origin.name).toBeGreaterThan(0);
    expect(many, origin.name).toEqual(alone);
    seen.add(JSON.stringify(many.refs));
  }
  expect(seen.size).toBe(origins.origins.length);
}
