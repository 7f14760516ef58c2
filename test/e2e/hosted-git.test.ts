import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, personalToken } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { hostedRepositoryPath, lfsObjectPath } from '#vcs/hosted-paths';

const run = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let work: string;
let askpass: string;
let gitConfig: string;
let owner: { login: string; auth: string };
let other: { login: string; auth: string };
let ownerToken: string;
let otherToken: string;

/**
 * Runs the git client with a private HOME and global config and no stored credentials: a password
 * reaches git only through GIT_ASKPASS from this process's environment.
 */
async function git(args: string[], options: { cwd?: string; password?: string } = {}) {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_GLOBAL: gitConfig,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...(options.password === undefined ? {} : { GIT_ASKPASS: askpass, TEST_GIT_PASSWORD: options.password }),
  };
  try {
    const { stdout, stderr } = await run('git', args, { cwd: options.cwd ?? work, env, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

async function createRepository(name: string, isPrivate: boolean) {
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, private: isPrivate }),
  });
  expect(response.status).toBe(201);
  return json(response);
}

const cloneUrl = (name: string) => `${stack.webUrl}/${owner.login}/${name}.git`;
const getRepository = async (name: string) =>
  json(
    await fetch(`${stack.baseUrl}/repos/${owner.login}/${name}`, { headers: { Authorization: owner.auth } }),
  );

/** A fresh working copy with one commit, `origin` set to the repository. */
async function workingCopy(name: string, file = 'README.md', content = `# ${name}\n`) {
  const dir = await mkdtemp(join(work, `${name}-`));
  expect((await git(['init', '-q', '-b', 'main', dir])).code).toBe(0);
  await writeFile(join(dir, file), content);
  for (const args of [
    ['add', '.'],
    ['-c', 'user.name=Owner', '-c', 'user.email=owner@example.com', 'commit', '-qm', 'first'],
    ['remote', 'add', 'origin', cloneUrl(name)],
  ])
    expect((await git(args, { cwd: dir })).code).toBe(0);
  return dir;
}

/** A working copy whose one commit adds `file` with `content` tracked by Git LFS (`*.bin`). */
async function lfsWorkingCopy(name: string, file: string, content: Buffer) {
  const dir = await workingCopy(name);
  expect((await git(['lfs', 'track', '*.bin'], { cwd: dir })).code).toBe(0);
  await writeFile(join(dir, file), content);
  for (const args of [
    ['add', '.gitattributes', file],
    ['-c', 'user.name=Owner', '-c', 'user.email=o@example.com', 'commit', '-qm', file],
  ])
    expect((await git(args, { cwd: dir })).code).toBe(0);
  return dir;
}

/** The owner pushes `main` from `dir`; an anonymous clone has `file` with `content`. */
async function pushAndCloneBack(name: string, dir: string, file: string, content: Buffer) {
  const pushed = await git(['push', '-q', 'origin', 'main'], { cwd: dir, password: ownerToken });
  expect(pushed.code, pushed.stderr).toBe(0);
  const clone = join(work, `${name}-clone`);
  const cloned = await git(['clone', '-q', cloneUrl(name), clone]);
  expect(cloned.code, cloned.stderr).toBe(0);
  expect((await readFile(join(clone, file))).equals(content)).toBe(true);
}

/** The hosted bare repository's path on the stack's disk. */
const hostedPath = (name: string) =>
  hostedRepositoryPath(join(dirname(stack.endpointsFile), 'repositories'), owner.login, name);

/** `git mktree` from a listing (it writes trees that `git add` never would, e.g. with a `..` entry). */
function mktree(cwd: string, listing: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH,
      HOME: work,
      GIT_CONFIG_GLOBAL: gitConfig,
      GIT_CONFIG_NOSYSTEM: '1',
    };
    const child = execFile('git', ['mktree'], { cwd, env }, (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim()),
    );
    child.stdin?.end(listing);
  });
}

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'hosted-git-'));
  gitConfig = join(work, 'gitconfig');
  await writeFile(gitConfig, '[lfs]\n\tlocksverify = false\n[init]\n\tdefaultBranch = main\n');
  askpass = join(work, 'askpass.sh');
  // Answers git's username prompt with the owner's login and its password prompt with the secret.
  await writeFile(
    askpass,
    `#!/bin/sh\ncase "$1" in Username*) echo "x-access-token" ;; *) echo "$TEST_GIT_PASSWORD" ;; esac\n`,
  );
  await chmod(askpass, 0o700);
  expect((await git(['lfs', 'install', '--skip-repo'])).code).toBe(0);
  owner = await createUser(stack.endpointsFile, 'hostowner');
  other = await createUser(stack.endpointsFile, 'otheruser');
  ownerToken = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  otherToken = (await personalToken(stack.baseUrl, other.auth, ['repo'])).token;
  await createRepository('open', false);
  await createRepository('secret', true);
  await createRepository('media', false);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('Git smart HTTP', () => {
  it('clones a repository never pushed to as an empty repository, anonymously', async () => {
    const result = await git(['clone', cloneUrl('open'), join(work, 'empty-clone')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/empty repository/);
  });

  it("records the owner's push (token as password) and serves it to anonymous clones", async () => {
    const before = await getRepository('open');
    expect(before.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // pushed_at has one-second resolution
    const dir = await workingCopy('open');
    const pushed = await git(['push', '-q', 'origin', 'main'], { cwd: dir, password: ownerToken });
    expect(pushed.code, pushed.stderr).toBe(0);

    const after = await getRepository('open');
    expect(after.pushed_at > before.pushed_at).toBe(true);
    expect(after.size).toBeGreaterThan(0);

    const clone = join(work, 'open-clone');
    const cloned = await git(['clone', '-q', cloneUrl('open'), clone]);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(clone, 'README.md'), 'utf8')).toBe('# open\n');
    const heads = await Promise.all([dir, clone].map((cwd) => git(['rev-parse', 'HEAD'], { cwd })));
    expect(heads[1]?.stdout).toBe(heads[0]?.stdout);
  });

  it('refuses a push by another user (403) and an anonymous push (401)', async () => {
    const dir = await workingCopy('open', 'OTHER.md', 'not yours\n');
    const byOther = await git(['push', '-q', 'origin', 'HEAD:refs/heads/other'], {
      cwd: dir,
      password: otherToken,
    });
    expect(byOther.code).not.toBe(0);
    expect(byOther.stderr).toMatch(/403|denied/);
    const anonymous = await git(['push', '-q', 'origin', 'HEAD:refs/heads/other'], { cwd: dir });
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username|Authentication/i);
    const refs = await git(['ls-remote', cloneUrl('open')]);
    expect(refs.stdout).not.toMatch(/refs\/heads\/other/);
  });

  it('removes the quarantine a push abandoned a day ago at the next push, and counts what remains in size', async () => {
    await createRepository('tidied', false);
    const dir = await workingCopy('tidied');
    expect((await git(['push', '-q', 'origin', 'main'], { cwd: dir, password: ownerToken })).code).toBe(0);
    // What receive-pack leaves when it is killed mid-push (index-pack's pack under way), a day and
    // a minute ago, and as a push under way on another task has it now.
    const objects = join(hostedPath('tidied'), 'objects');
    const quarantine = async (name: string, bytes: number, ageMs: number) => {
      const pack = join(objects, name, 'pack');
      await mkdir(pack, { recursive: true });
      await writeFile(join(pack, 'tmp_pack_abcdef'), randomBytes(bytes));
      const then = new Date(Date.now() - ageMs);
      for (const path of [join(pack, 'tmp_pack_abcdef'), pack, join(objects, name)])
        await utimes(path, then, then);
      return (await stat(join(pack, 'tmp_pack_abcdef'))).blocks * 512;
    };
    await quarantine('tmp_objdir-incoming-Stale1', 512 * 1024, 24 * 3600_000 + 60_000);
    const live = await quarantine('tmp_objdir-incoming-Live01', 256 * 1024, 0);

    await writeFile(join(dir, 'NEXT.md'), 'next\n');
    for (const args of [
      ['add', 'NEXT.md'],
      ['-c', 'user.name=Owner', '-c', 'user.email=o@example.com', 'commit', '-qm', 'next'],
      ['push', '-q', 'origin', 'main'],
    ])
      expect((await git(args, { cwd: dir, password: ownerToken })).code).toBe(0);

    expect((await readdir(objects)).filter((name) => name.startsWith('tmp_objdir-'))).toEqual([
      'tmp_objdir-incoming-Live01',
    ]);
    const counted = await git(['--git-dir', hostedPath('tidied'), 'count-objects', '-v']);
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(counted.stdout)?.[1]);
    expect((await getRepository('tidied')).size).toBe(field('size') + field('size-pack') + live / 1024);
  });

  it('serves a private repository to its owner only', async () => {
    const dir = await workingCopy('secret');
    expect((await git(['push', '-q', 'origin', 'main'], { cwd: dir, password: ownerToken })).code).toBe(0);

    const anonymous = await git(['clone', '-q', cloneUrl('secret'), join(work, 'secret-anon')]);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username/);
    const wrong = await git(['clone', '-q', cloneUrl('secret'), join(work, 'secret-wrong')], {
      password: `ghp_${'x'.repeat(36)}`,
    });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Authentication failed/);
    const byOther = await git(['clone', '-q', cloneUrl('secret'), join(work, 'secret-other')], {
      password: otherToken,
    });
    expect(byOther.code).not.toBe(0);
    expect(byOther.stderr).toMatch(/not found/i);

    const cloned = await git(['clone', '-q', cloneUrl('secret'), join(work, 'secret-own')], {
      password: ownerToken,
    });
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(work, 'secret-own', 'README.md'), 'utf8')).toBe('# secret\n');
  });

  it.each([
    ['..', 'hasDotdot'],
    ['.GIT', 'hasDotgit'],
    ['.git', 'hasDotgit'],
  ])("refuses the owner's push of a tree with a %s entry with git's own fsck message", async (name, id) => {
    const dir = await workingCopy('open', 'SAFE.md', 'safe\n');
    const blob = (await git(['hash-object', '-w', 'SAFE.md'], { cwd: dir })).stdout.trim();
    const made = await mktree(dir, `100644 blob ${blob}\t${name}\n`);
    const commit = (
      await git(
        [
          '-c',
          'user.name=Owner',
          '-c',
          'user.email=o@example.com',
          'commit-tree',
          '-p',
          'HEAD',
          '-m',
          'evil',
          made,
        ],
        { cwd: dir },
      )
    ).stdout.trim();

    const pushed = await git(['push', 'origin', `${commit}:refs/heads/evil`], {
      cwd: dir,
      password: ownerToken,
    });

    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(
      `remote: error: object ${made}: ${id}: contains '${name === '..' ? '..' : '.git'}'`,
    );
    expect(pushed.stderr).toMatch(/fsck error in packed object/);
    expect((await git(['ls-remote', cloneUrl('open')])).stdout).not.toMatch(/refs\/heads\/evil/);
  });

  it('answers Git errors as plain text with the Basic challenge, and a name without .git as 404', async () => {
    const response = await fetch(`${cloneUrl('secret')}/info/refs?service=git-upload-pack`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const bare = await fetch(`${stack.webUrl}/${owner.login}/open/info/refs?service=git-upload-pack`);
    expect(bare.status).toBe(404);
  });
});

describe('Git LFS', () => {
  const lfsUrl = (name: string) => `${cloneUrl(name)}/info/lfs`;
  // A PNG signature: git-lfs sniffs `image/png` for it; the upload action's Content-Type keeps the
  // body binary (as API Gateway's binaryMediaTypes would), else the bytes would not survive.
  const bigFile = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(1_500_000)]);
  const oid = createHash('sha256').update(bigFile).digest('hex');

  it('pushes and clones a large file through the batch API', async () => {
    const dir = await lfsWorkingCopy('media', 'big.bin', bigFile);
    await pushAndCloneBack('media', dir, 'big.bin', bigFile);
    expect((await stat(lfsObjectPath(hostedPath('media'), oid))).size).toBe(bigFile.length);
  }, 60_000);

  it('takes LFS objects before the first push (`git lfs push --all`), then the push and a clone', async () => {
    await createRepository('lfs-first', false);
    const content = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(200_000)]);
    const dir = await lfsWorkingCopy('lfs-first', 'first.bin', content);
    const uploaded = await git(['lfs', 'push', '--all', 'origin', 'main'], {
      cwd: dir,
      password: ownerToken,
    });
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const stored = lfsObjectPath(hostedPath('lfs-first'), createHash('sha256').update(content).digest('hex'));
    expect((await stat(stored)).size).toBe(content.length);

    await pushAndCloneBack('lfs-first', dir, 'first.bin', content);
  }, 60_000);

  it('makes a repository of a directory that holds only LFS objects (left by an upload before the first push)', async () => {
    await createRepository('lfs-only', false);
    const path = hostedPath('lfs-only');
    const content = Buffer.from('an object uploaded before any push\n');
    const stored = lfsObjectPath(path, createHash('sha256').update(content).digest('hex'));
    await mkdir(dirname(stored), { recursive: true });
    await writeFile(stored, content);

    const empty = await git(['clone', '-q', cloneUrl('lfs-only'), join(work, 'lfs-only-empty')]);
    expect(empty.code, empty.stderr).toBe(0);
    const dir = await workingCopy('lfs-only');
    const pushed = await git(['push', '-q', 'origin', 'main'], { cwd: dir, password: ownerToken });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(await readFile(stored)).toEqual(content);
    const cloned = await git(['clone', '-q', cloneUrl('lfs-only'), join(work, 'lfs-only-clone')]);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(work, 'lfs-only-clone', 'README.md'), 'utf8')).toBe('# lfs-only\n');
  }, 60_000);

  it("answers the batch API with per-object errors and an action token, not the caller's Authorization", async () => {
    const missing = 'f'.repeat(64);
    const authorization = `token ${ownerToken}`;
    const response = await fetch(`${lfsUrl('media')}/objects/batch`, {
      method: 'POST',
      headers: {
        Authorization: authorization,
        Accept: 'application/vnd.git-lfs+json',
        'Content-Type': 'application/vnd.git-lfs+json',
      },
      body: JSON.stringify({
        operation: 'download',
        objects: [
          { oid, size: bigFile.length },
          { oid: missing, size: 1 },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.git-lfs+json');
    const body = await json(response);
    expect(body.transfer).toBe('basic');
    expect(body.objects[0].actions.download).toMatchObject({
      href: `${lfsUrl('media')}/objects/${oid}`,
      header: { Authorization: expect.stringMatching(/^RemoteAuth \S+$/) },
      expires_in: 3600,
    });
    expect(JSON.stringify(body)).not.toContain(ownerToken);
    expect(body.objects[1]).toEqual({
      oid: missing,
      size: 1,
      error: { code: 404, message: expect.any(String) },
    });
  });

  const BAD_OIDS = ['../../x', '..%2F..%2Fx', 'A'.repeat(64), 'f'.repeat(63), `${'f'.repeat(64)}0`];

  it.each(BAD_OIDS)('answers a batch naming the oid %s with 422 in the LFS error shape', async (bad) => {
    for (const operation of ['download', 'upload']) {
      const response = await fetch(`${lfsUrl('media')}/objects/batch`, {
        method: 'POST',
        headers: { Authorization: `token ${ownerToken}`, 'Content-Type': 'application/vnd.git-lfs+json' },
        body: JSON.stringify({
          operation,
          objects: [
            { oid, size: bigFile.length },
            { oid: bad, size: 1 },
          ],
        }),
      });
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toBe('application/vnd.git-lfs+json');
      expect(await json(response)).toEqual({
        message: expect.any(String),
        documentation_url: expect.any(String),
      });
    }
  });

  it.each(BAD_OIDS)('answers a download or an upload of the oid %s with 422', async (bad) => {
    const path = `${lfsUrl('media')}/objects/${bad.includes('/') ? encodeURIComponent(bad) : bad}`;
    const download = await fetch(path, { headers: { Authorization: `token ${ownerToken}` } });
    const upload = await fetch(`${path}?size=1`, {
      method: 'PUT',
      headers: { Authorization: `token ${ownerToken}`, 'Content-Type': 'application/octet-stream' },
      body: 'x',
    });
    for (const response of [download, upload]) {
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toBe('application/vnd.git-lfs+json');
      expect((await json(response)).message).toMatch(/oid/);
    }
  });

  it('refuses an upload whose content does not hash to its oid', async () => {
    const content = Buffer.from('not what the oid says');
    const claimed = createHash('sha256').update('something else').digest('hex');
    const put = await fetch(`${lfsUrl('media')}/objects/${claimed}?size=${content.length}`, {
      method: 'PUT',
      headers: { Authorization: `token ${ownerToken}`, 'Content-Type': 'application/octet-stream' },
      body: content,
    });
    expect(put.status).toBe(422);
    const get = await fetch(`${lfsUrl('media')}/objects/${claimed}`, {
      headers: { Authorization: `token ${ownerToken}` },
    });
    expect(get.status).toBe(404);
    const byOther = await fetch(
      `${lfsUrl('media')}/objects/${createHash('sha256').update(content).digest('hex')}`,
      {
        method: 'PUT',
        headers: { Authorization: `token ${otherToken}`, 'Content-Type': 'application/octet-stream' },
        body: content,
      },
    );
    expect(byOther.status).toBe(403);
  });
});
