import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { launchBrowser } from '#test/browser';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { json, startTestStack } from '#test/stack';
import { startTlsFront, type TlsFront } from '#test/tls-front';

/*
 * Debian's gh 2.23, unmodified, against the service as a GitHub Enterprise Server host: https
 * through a TLS front end the test starts (`tls-front.ts`), gh's own OAuth app registered as GHES
 * ships it (README, "Hosting gh"). Sign-in with a token and with the device flow approved in
 * Chromium, `gh auth status`, and `gh repo clone` of a private repository (git gets the token from
 * gh's credential helper).
 */
const GH_CLIENT_ID = '178c6fc778ccc68e1d6a';
const GH_CLIENT_SECRET = '34ddeff2b558a23d38fba8a6de74f086ede1cc0b';
const PASSWORD = 'gh-cli-pass-123';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let front: TlsFront;
let browser: Browser;
let octocat: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  process.env.DEVICE_POLL_INTERVAL_SECONDS = '1';
  stack = await startTestStack();
  front = await startTlsFront(stack.webUrl);
  octocat = await createUser(stack.endpointsFile, 'octocat', PASSWORD);
  await createUser(stack.endpointsFile, 'site-admin');
  const app = await admin(
    stack.endpointsFile,
    'app',
    'create',
    '--owner',
    'site-admin',
    '--name',
    'GitHub CLI',
    '--url',
    'https://github.com/cli/cli',
    '--callback-url',
    'http://localhost/',
    '--client-id',
    GH_CLIENT_ID,
    '--client-secret',
    GH_CLIENT_SECRET,
  );
  expect(app.code, app.stderr).toBe(0);
  expect((await admin(stack.endpointsFile, 'app', 'device-flow', 'enable', GH_CLIENT_ID)).code).toBe(0);
  // A private repository with one commit, pushed by plain git.
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: octocat.auth },
    body: JSON.stringify({ name: 'hello', private: true }),
  });
  expect(created.status).toBe(201);
  const git = await gitClient();
  const work = await mkdtemp(join(tmpdir(), 'gh-seed-'));
  for (const args of [
    ['init', '-q', work],
    ['-C', work, 'commit', '-q', '--allow-empty', '-m', 'Hello from git'],
    ['-C', work, 'push', '-q', `${stack.webUrl.replace('//', '//octocat@')}/octocat/hello.git`, 'main'],
  ]) {
    const result = await git(args, { password: PASSWORD });
    expect(result.code, result.stderr).toBe(0);
  }
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await front?.stop();
  await stack?.stop();
});

interface Gh {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Resolves with stderr once it matches. */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
}

/** A gh config directory (and HOME) of its own, like a fresh machine. */
async function ghHome(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'gh-home-'));
}

/** Runs gh with nothing of this machine's configuration: its own config dir, the front end as its proxy. */
const gh = (home: string, args: string[], input?: string): Gh => inGhHome(home, 'gh', args, input);

/** Runs a program (gh, or git configured by gh) in gh's environment. */
function inGhHome(home: string, program: string, args: string[], input?: string): Gh {
  const child = spawn(program, args, {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GH_CONFIG_DIR: join(home, 'gh'),
      GH_NO_UPDATE_NOTIFIER: '1',
      GH_PROMPT_DISABLED: '1',
      NO_COLOR: '1',
      // gh would open a browser on an interactive terminal; here it prints the URL, and this is the fallback.
      BROWSER: 'false',
      HTTPS_PROXY: front.proxyUrl,
      SSL_CERT_FILE: front.certificateFile,
      GIT_SSL_CAINFO: front.certificateFile,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stdin?.end(input ?? '');
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  const waitForStderr = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = stderr.match(pattern);
      if (match) return match;
      if (child.exitCode !== null) throw new Error(`gh exited ${child.exitCode}: ${stderr}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  return { child, done, waitForStderr };
}

describe('gh 2.23 against the service as an Enterprise host', () => {
  it('gh auth login --with-token validates the token at the API root; gh auth status names the user', async () => {
    const home = await ghHome();
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['repo', 'read:org']);
    const login = await gh(home, ['auth', 'login', '--hostname', front.hostname, '--with-token'], token).done;
    expect(login.code, login.stderr).toBe(0);
    expect(front.requests).toContain('GET /api/v3/');

    const status = await gh(home, ['auth', 'status', '--hostname', front.hostname]).done;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(`Logged in to ${front.hostname} as octocat`);
    expect(status.stderr).toContain('Token scopes: read:org, repo');
  }, 30_000);

  it('gh auth status reports a token without read:org, and a revoked one', async () => {
    const home = await ghHome();
    const { token, id } = await personalToken(stack.baseUrl, octocat.auth, ['repo']);
    const login = await gh(home, ['auth', 'login', '--hostname', front.hostname, '--with-token'], token).done;
    expect(login.code).toBe(1);
    expect(login.stderr).toContain("error validating token: missing required scope 'read:org'");
    const { token: good } = await personalToken(stack.baseUrl, octocat.auth, ['repo', 'read:org']);
    expect(
      (await gh(home, ['auth', 'login', '--hostname', front.hostname, '--with-token'], good).done).code,
    ).toBe(0);
    const revoked = await fetch(`${stack.baseUrl}/authorizations/${id}`, {
      method: 'DELETE',
      headers: { Authorization: octocat.auth },
    });
    expect(revoked.status).toBe(204);
    const listed = await json(
      await fetch(`${stack.baseUrl}/authorizations`, { headers: { Authorization: octocat.auth } }),
    );
    const goodId = listed.find((entry: { token_last_eight: string }) =>
      good.endsWith(entry.token_last_eight),
    ).id;
    await fetch(`${stack.baseUrl}/authorizations/${goodId}`, {
      method: 'DELETE',
      headers: { Authorization: octocat.auth },
    });
    const status = await gh(home, ['auth', 'status', '--hostname', front.hostname]).done;
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`${front.hostname}: authentication failed`);
  }, 30_000);

  it('gh auth login --web: the device flow approved in Chromium, then gh auth status, gh repo clone, and a push with gh as the credential helper', async () => {
    const home = await ghHome();
    const login = gh(home, [
      'auth',
      'login',
      '--hostname',
      front.hostname,
      '--web',
      '--git-protocol',
      'https',
    ]);
    const [, userCode] = await login.waitForStderr(/one-time code: (\S+)/);
    const [, verificationUri] = await login.waitForStderr(
      /Open this URL to continue in your web browser: (\S+)/,
    );
    expect(verificationUri).toBe(`${stack.webUrl}/login/device`);

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(verificationUri ?? '');
      await page.getByLabel('Username', { exact: true }).fill('octocat');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Enter the code displayed on your device').fill(userCode ?? '');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('button', { name: 'Authorize GitHub CLI' }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        "Congratulations, you're all set!",
      );
    } finally {
      await context.close();
    }
    const signedIn = await login.done;
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stderr).toContain('Logged in as octocat');
    const hosts = await readFile(join(home, 'gh', 'hosts.yml'), 'utf8');
    expect(hosts).toContain(`${front.hostname}:`);
    expect(hosts).toMatch(/oauth_token: gho_/);

    const status = await gh(home, ['auth', 'status', '--hostname', front.hostname]).done;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(`Logged in to ${front.hostname} as octocat`);
    expect(status.stderr).toContain('Token scopes: gist, read:org, repo');

    const clone = await gh(home, ['repo', 'clone', `${front.hostname}/octocat/hello`]).done;
    expect(clone.code, clone.stderr).toBe(0);
    const git = await gitClient();
    const log = await git(['-C', join(home, 'hello'), 'log', '--format=%s']);
    expect(log.stdout.trim()).toBe('Hello from git');
    expect(front.requests).toContain('POST /api/graphql');

    // And a push, with gh as git's credential helper (`gh auth setup-git`), as gh's users work.
    const setup = await gh(home, ['auth', 'setup-git', '--hostname', front.hostname]).done;
    expect(setup.code, setup.stderr).toBe(0);
    const clone2 = join(home, 'hello');
    const identity = ['-c', 'user.name=Mona', '-c', 'user.email=mona@example.com'];
    const commit = await inGhHome(home, 'git', [
      '-C',
      clone2,
      ...identity,
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'Pushed with gh as the helper',
    ]).done;
    expect(commit.code, commit.stderr).toBe(0);
    const push = await inGhHome(home, 'git', ['-C', clone2, 'push', '-q', 'origin', 'HEAD']).done;
    expect(push.code, push.stderr).toBe(0);
    const head = await git(['-C', clone2, 'rev-parse', 'HEAD']);
    const remote = await git(
      ['ls-remote', `${stack.webUrl.replace('//', '//octocat@')}/octocat/hello.git`, 'refs/heads/main'],
      {
        password: PASSWORD,
      },
    );
    expect(remote.stdout.split('\t')[0]).toBe(head.stdout.trim());
  }, 60_000);
});
