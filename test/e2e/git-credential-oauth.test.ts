import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '#test/browser';
import { createApp, createUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/**
 * Debian's `git-credential-oauth` (0.4.2), unmodified, set up as its README says for a GitHub
 * Enterprise host: an OAuth app registered with the callback `http://127.0.0.1`, and git config
 * naming the client and the endpoints. On `git clone` of a private repository the helper listens
 * on an ephemeral loopback port, sends the browser to the authorize page with that port in
 * `redirect_uri` and a PKCE challenge, and exchanges the code with its verifier. The browser step
 * is Debian's Chromium: `open` (which the helper runs) only records the URL for the test to
 * open. The token then pushes and clones through the front end; git's credential cache (the
 * README's `configure`) keeps it, so the browser is needed once.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;
let app: Awaited<ReturnType<typeof createApp>>;
let mona: Awaited<ReturnType<typeof createUser>>;
let home: string;
let openLog: string;
const children: ChildProcess[] = [];

const REPO = 'secret-notes';

beforeAll(async () => {
  stack = await startTestStack();
  browser = await launchBrowser();
  await createUser(stack.endpointsFile, 'owner');
  mona = await createUser(stack.endpointsFile, 'mona');
  app = await createApp(stack.endpointsFile, 'owner', 'Git Credential OAuth', 'http://127.0.0.1');
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: mona.auth },
    body: JSON.stringify({ name: REPO, private: true }),
  });
  expect(created.status).toBe(201);

  home = await mkdtemp(join(tmpdir(), 'git-credential-oauth-'));
  const bin = join(home, 'bin');
  await mkdir(bin);
  openLog = join(home, 'opened.txt');
  await writeFile(openLog, '');
  // 0.4.2 "opens a browser" by running `open` (on Debian, xdg-open's alternative): here that
  // only records the URL for Chromium.
  await writeFile(join(bin, 'open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${openLog}'\n`);
  await chmod(join(bin, 'open'), 0o755);
  const host = stack.webUrl; // http://127.0.0.1:<port>
  await writeFile(
    join(home, 'gitconfig'),
    [
      '[init]\n\tdefaultBranch = main',
      '[user]\n\tname = Mona\n\temail = mona@example.com',
      // `git credential-oauth configure` on Linux: the cache first, then the helper.
      `[credential]\n\thelper = cache --timeout 300 --socket ${join(home, 'cache-socket')}\n\thelper = oauth`,
      `[credential "${host}"]`,
      `\toauthClientId = ${app.clientId}`,
      `\toauthClientSecret = ${app.clientSecret}`,
      '\toauthScopes = repo',
      '\toauthAuthURL = /login/oauth/authorize',
      '\toauthTokenURL = /login/oauth/access_token',
      '',
    ].join('\n'),
  );
}, 60_000);

afterAll(async () => {
  if (home)
    await runGit(['credential-cache', '--socket', join(home, 'cache-socket'), 'exit']).catch(() => {});
  for (const child of children) if (child.exitCode === null) child.kill();
  await browser?.close();
  await stack?.stop();
});

interface GitRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** git as the user runs it, with the helper's config and `bin/` (`open`) first on PATH. */
function runGit(args: string[], cwd = home): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = spawn('git', args, {
      cwd,
      env: {
        PATH: `${join(home, 'bin')}:${process.env.PATH}`,
        HOME: home,
        GIT_CONFIG_GLOBAL: join(home, 'gitconfig'),
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
      },
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function openedUrls(): Promise<string[]> {
  return (await readFile(openLog, 'utf8')).split('\n').filter((line) => line !== '');
}

async function waitForOpenedUrl(count: number): Promise<string> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const urls = await openedUrls();
    if (urls.length >= count) return urls[count - 1] ?? '';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the helper opened no authorize URL');
}

describe('git-credential-oauth (Debian 0.4.2) against the service', () => {
  it('signs in once through Chromium on an ephemeral loopback port, then clones and pushes a private repository', async () => {
    const remote = `${stack.webUrl}/mona/${REPO}.git`;
    const cloning = runGit(['clone', remote, 'first']);

    const authorizeUrl = new URL(
      await Promise.race([
        waitForOpenedUrl(1),
        cloning.then((result) => {
          throw new Error(`git ended before the browser step: ${result.stderr}`);
        }),
      ]),
    );
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(`${stack.webUrl}/login/oauth/authorize`);
    const redirect = new URL(authorizeUrl.searchParams.get('redirect_uri') ?? '');
    // The registered callback is http://127.0.0.1; the helper listens on a port of its own.
    expect(redirect.hostname).toBe('127.0.0.1');
    expect(redirect.port).not.toBe('');
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(authorizeUrl.href);
      await page.getByLabel('Username', { exact: true }).fill('mona');
      await page.getByLabel('Password', { exact: true }).fill(mona.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Authorize Git Credential OAuth' }).click();
      // Chromium lands on the helper's own page on its ephemeral port.
      await page.waitForURL((url) => url.host === redirect.host);
      await expect(page.textContent('body')).resolves.toContain('Success');
      await screenshot(page, 'git-credential-oauth-done');
    } finally {
      await context.close();
    }

    const cloned = await cloning;
    expect(cloned.code, cloned.stderr).toBe(0);

    const first = join(home, 'first');
    await writeFile(join(first, 'notes.md'), '# private notes\n');
    expect((await runGit(['add', 'notes.md'], first)).code).toBe(0);
    expect((await runGit(['commit', '-m', 'First note'], first)).code).toBe(0);
    const pushed = await runGit(['push', 'origin', 'main'], first);
    expect(pushed.code, pushed.stderr).toBe(0);

    const again = await runGit(['clone', remote, 'second']);
    expect(again.code, again.stderr).toBe(0);
    await expect(readFile(join(home, 'second', 'notes.md'), 'utf8')).resolves.toBe('# private notes\n');
    // The cache held the token: the browser was needed once.
    expect(await openedUrls()).toHaveLength(1);

    // What the helper got is an OAuth token of the app, for mona, with the scope asked for.
    const filled = await new Promise<string>((resolve) => {
      const child = spawn('git', ['credential', 'fill'], {
        env: {
          PATH: `${join(home, 'bin')}:${process.env.PATH}`,
          HOME: home,
          GIT_CONFIG_GLOBAL: join(home, 'gitconfig'),
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_TERMINAL_PROMPT: '0',
        },
      });
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.on('close', () => resolve(out));
      child.stdin.end(`url=${remote}\n\n`);
    });
    const token = /^password=(.*)$/m.exec(filled)?.[1] ?? '';
    expect(token).toMatch(/^gho_/);
    const me = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });
    expect((await json(me)).login).toBe('mona');
    expect(me.headers.get('x-oauth-scopes')).toBe('repo');
  });
});
