import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Octokit as OctokitClient } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { startTestStack } from '#test/stack';

/**
 * A whole source import driven by the real `@octokit/rest` 16.43.2 (`migrations.*`, the barred-rock
 * preview), configured as for GitHub Enterprise: start, progress, authors, mapping, large files, the
 * LFS choice, restart and cancel, against a Git origin on 127.0.0.1.
 */
const requireFromHere = createRequire(import.meta.url);
const { Octokit } = requireFromHere('@octokit/rest') as typeof import('@octokit/rest');
// biome-ignore lint/suspicious/noExplicitAny: Octokit v16 types these responses loosely; the assertions say what they must be
type Body = any;

const LARGE_FILE_BYTES = 150_000;
process.env[ENV.largeFileBytes] = String(LARGE_FILE_BYTES);

let stack: Awaited<ReturnType<typeof startTestStack>>;
let origin: OriginServer;
let octokit: OctokitClient;
const preview = { mediaType: { previews: ['barred-rock'] } };

async function progressUntil(repo: string, done: (body: Body) => boolean): Promise<Body> {
  const deadline = Date.now() + 45_000;
  let last: Body;
  while (Date.now() < deadline) {
    last = (await octokit.migrations.getImportProgress({ owner: 'octocat', repo, ...preview })).data;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import did not get there: ${JSON.stringify(last)}`);
}

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'octokit-origins-'));
  await makeFixtureRepository(join(root, 'project.git'), {
    commits: 30,
    branches: 2,
    annotatedTags: 2,
    authors: [
      { name: 'Mona Lisa', email: 'mona@example.org' },
      { name: 'Hubot', email: 'hubot@example.org' },
    ],
    largeFile: { path: 'data/blob.bin', bytes: LARGE_FILE_BYTES + 10_000 },
  });
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, 'octocat');
  octokit = new Octokit({
    baseUrl: stack.baseUrl,
    auth: { username: user.login, password: user.password, on2fa: async () => '' },
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: console.error },
  });
  await octokit.repos.createForAuthenticatedUser({ name: 'moved' });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await origin?.close();
});

describe('@octokit/rest 16.43.2 migrations.*', () => {
  it('runs a whole import', async () => {
    const started = await octokit.migrations.startImport({
      owner: 'octocat',
      repo: 'moved',
      vcs: 'git',
      vcs_url: `${origin.url}/project.git`,
      ...preview,
    });
    expect(started.status).toBe(201);
    expect((started.headers as Record<string, string>)['x-github-media-type']).toBe(
      'github.barred-rock-preview',
    );
    expect((started.data as Body).status).toBe('importing');

    const waiting = await progressUntil('moved', (body) => body.has_large_files === true);
    expect(waiting.use_lfs).toBe('undecided');
    const large = (await octokit.migrations.getLargeFiles({ owner: 'octocat', repo: 'moved', ...preview }))
      .data as Body;
    expect(large).toEqual([
      expect.objectContaining({ path: 'data/blob.bin', size: LARGE_FILE_BYTES + 10_000 }),
    ]);

    const authors = (
      await octokit.migrations.getCommitAuthors({ owner: 'octocat', repo: 'moved', ...preview })
    ).data as Body[];
    expect(authors.map((author) => author.remote_name).sort()).toEqual(['Hubot', 'Mona Lisa']);
    const since = (
      await octokit.migrations.getCommitAuthors({
        owner: 'octocat',
        repo: 'moved',
        since: String(authors[0].id),
        ...preview,
      })
    ).data as Body[];
    expect(since.map((author) => author.id)).toEqual([authors[1].id]);
    const hubot = authors.find((author) => author.remote_name === 'Hubot');
    const mapped = await octokit.migrations.mapCommitAuthor({
      owner: 'octocat',
      repo: 'moved',
      author_id: hubot.id,
      name: 'Hubot the Robot',
      email: 'hubot@github.example',
      ...preview,
    });
    expect(mapped.data).toMatchObject({ id: hubot.id, remote_name: 'Hubot', name: 'Hubot the Robot' });

    const chosen = await octokit.migrations.setLfsPreference({
      owner: 'octocat',
      repo: 'moved',
      use_lfs: 'opt_out',
      ...preview,
    });
    expect((chosen.data as Body).use_lfs).toBe('opt_out');
    const complete = await progressUntil('moved', (body) => body.status === 'complete');
    expect(complete).toMatchObject({ status_text: 'Done', authors_count: 2, large_files_count: 1 });

    const restarted = await octokit.migrations.updateImport({ owner: 'octocat', repo: 'moved', ...preview });
    expect((restarted.data as Body).status).toBe('importing');
    await progressUntil('moved', (body) => body.status === 'complete');

    const git = await gitClient();
    const dir = await mkdtemp(join(tmpdir(), 'octokit-clone-'));
    expect((await git(['clone', '-q', '--mirror', `${stack.webUrl}/octocat/moved.git`, dir])).code).toBe(0);
    const names = await git(['log', '--all', '--format=%an'], { cwd: dir });
    expect(names.stdout).toContain('Hubot the Robot');
    const refNames = async (url: string) =>
      (await remoteRefs(git, url)).map((line) => line.split(' ')[1]).sort();
    // Mapped and opted out: new ids, the same branches and tags.
    expect(await refNames(dir)).toEqual(await refNames(`${origin.url}/project.git`));

    const cancelled = await octokit.migrations.cancelImport({ owner: 'octocat', repo: 'moved', ...preview });
    expect(cancelled.status).toBe(204);
    await expect(
      octokit.migrations.getImportProgress({ owner: 'octocat', repo: 'moved', ...preview }),
    ).rejects.toMatchObject({
      status: 404,
    });
  });
});
