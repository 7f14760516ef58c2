import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientPhases } from '#bench/import-rounds';
import { executionHistory } from '#bench/support';
import { type OriginServer, serveGitDaemon, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/*
 * Real third-party material (issue 18): the Lua project's Git history up to 5.2.0 (3,699 commits,
 * 29 tags since 1993; `test/fixtures/git/README.md`), served once for the file over `git://`
 * (`git daemon`) and smart HTTP on 127.0.0.1, imported through the API and the workflow as the
 * README's example does, and checked the way a user would: the hosted repository's refs against
 * the origin's.
 */

const exec = promisify(execFile);
const BUNDLE = fileURLToPath(new URL('../fixtures/git/lua-5.2.0.bundle', import.meta.url));

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
let daemon: OriginServer;
let http: OriginServer;
/** `<id> <ref>` lines of the origin, sorted (what `git ls-remote` of the import must print). */
let originRefs: string[];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'lua-origin-'));
  const origin = join(root, 'lua.git');
  const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: root };
  await exec('git', ['init', '--bare', '--quiet', origin], { env });
  await exec('git', ['--git-dir', origin, 'fetch', '--quiet', BUNDLE, 'refs/*:refs/*'], { env });
  await exec('git', ['--git-dir', origin, 'symbolic-ref', 'HEAD', 'refs/heads/master'], { env });
  const { stdout } = await exec(
    'git',
    ['--git-dir', origin, 'for-each-ref', '--format=%(objectname) %(refname)'],
    { env },
  );
  originRefs = stdout.trim().split('\n').sort();
  [stack, daemon, http] = await Promise.all([startTestStack(), serveGitDaemon(root), serveGitHttp(root)]);
  git = await gitClient();
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), daemon?.close(), http?.close()]);
  await rm(root, { recursive: true, force: true });
});

/** Imports `body` into a new repository `name` and waits for the import to end. */
async function imported(name: string, body: Record<string, unknown>) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${name}/import`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const { body: progress } = await api('GET', `/repos/octocat/${name}/import`);
    if (progress.status === 'complete' || progress.status === 'error' || Date.now() > deadline)
      return progress;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const hostedRefs = (name: string) => remoteRefs(git, `${stack.webUrl}/octocat/${name}.git`);

describe('the Lua history (third-party, 3,699 commits)', () => {
  it('imports over git:// as the README’s example does (no vcs: detected), every ref at the origin’s id', async () => {
    const progress = await imported('lua-daemon', { vcs_url: `${daemon.url}/lua.git` });
    expect(progress, JSON.stringify(progress)).toMatchObject({ status: 'complete', vcs: 'git' });
    expect(originRefs).toHaveLength(30);
    expect(await hostedRefs('lua-daemon')).toEqual(originRefs);
    const report = await api('GET', '/repos/octocat/lua-daemon/import/report');
    expect(report.body).toMatchObject({ status: 'complete', large_files_action: 'none' });
  });

  it('imports over smart HTTP with the same refs, its client waiting on the steps and nothing else', async () => {
    const sentAt = Date.now();
    const progress = await imported('lua-http', { vcs_url: `${http.url}/lua.git`, vcs: 'git' });
    const seenAt = Date.now();
    expect(progress, JSON.stringify(progress)).toMatchObject({ status: 'complete', vcs: 'git' });
    expect(await hostedRefs('lua-http')).toEqual(originRefs);

    // Issue 35: what the client waits for beyond the steps' own work. The path holds no Wait state
    // and no state beyond the four steps and their three checks; the time outside the steps is
    // transitions only (bounded far above them, for a loaded machine).
    const history = await executionHistory(stack.stepFunctionsEndpoint, 'octocat.lua-http.attempt-1');
    const phases = clientPhases(history, sentAt, sentAt, seenAt);
    expect(phases.states).toEqual([
      'WhereToStart',
      'ImportRawHistory',
      'IsRawHistoryComplete',
      'IsLfsChoiceNeeded',
      'RewriteHistory',
      'Push',
      'IsPushComplete',
      'Complete',
    ]);
    expect(history.some((event) => event.type.startsWith('Wait'))).toBe(false);
    expect(phases.between, JSON.stringify(phases)).toBeLessThan(1000);
    expect(phases.start, JSON.stringify(phases)).toBeLessThan(10_000);
  });
});
