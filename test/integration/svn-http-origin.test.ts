import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canConnect } from '#local/ports';
import { type SvnHttpServer, serveSvnHttp } from '#local/svn-http-origins';

const exec = promisify(execFile);
const USER = { username: 'alice', password: 'pw-Http-Svn-42' };

let root: string;
let server: SvnHttpServer;

const svn = (home: string, ...args: string[]) =>
  exec('svn', ['--non-interactive', '--no-auth-cache', '--config-dir', join(home, 'cfg'), ...args], {
    env: { PATH: process.env.PATH, HOME: home, LC_ALL: 'C' },
  });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svn-http-origin-'));
  const parent = join(root, 'repos');
  await mkdir(parent);
  for (const name of ['alpha', 'beta']) {
    await exec('svnadmin', ['create', join(parent, name)]);
    await svn(
      root,
      'mkdir',
      '-m',
      'Layout',
      '--username',
      'ada',
      ...['trunk', 'branches', 'tags'].map((sub) => `file://${join(parent, name)}/${sub}`),
    );
  }
  server = await serveSvnHttp({ parentPath: parent, users: { [USER.username]: USER.password } });
});

afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe('serveSvnHttp (Apache with mod_dav_svn)', () => {
  it('serves every repository under the parent path without credentials at /svn', async () => {
    const listed = await svn(root, 'ls', server.url('alpha'));
    expect(listed.stdout.split('\n').filter(Boolean).sort()).toEqual(['branches/', 'tags/', 'trunk/']);
    const info = await svn(root, 'info', '--show-item', 'revision', server.url('beta'));
    expect(info.stdout.trim()).toBe('1');
    const options = await fetch(server.url('alpha'), { method: 'OPTIONS' });
    expect(options.headers.get('dav') ?? '').toContain('http://subversion.tigris.org/xmlns/dav/svn/depth');
  });

  it('answers 401 at /private without credentials and serves it with them', async () => {
    const bare = await fetch(server.url('alpha', 'private'), { method: 'OPTIONS' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Basic /);
    await expect(svn(root, 'ls', server.url('alpha', 'private'))).rejects.toThrow(/E170001|E215004/);
    const wrong = await fetch(server.url('alpha', 'private'), {
      method: 'OPTIONS',
      headers: { Authorization: `Basic ${Buffer.from(`${USER.username}:nope`).toString('base64')}` },
    });
    expect(wrong.status).toBe(401);
    const listed = await svn(
      root,
      'ls',
      '--username',
      USER.username,
      '--password',
      USER.password,
      server.url('alpha', 'private'),
    );
    expect(listed.stdout).toContain('trunk/');
  });

  it('leaves nothing running after close', async () => {
    const other = await serveSvnHttp({ parentPath: join(root, 'repos') });
    expect(await canConnect(other.port)).toBe(true);
    expect(() => process.kill(other.pid, 0)).not.toThrow();
    await other.close();
    expect(await canConnect(other.port)).toBe(false);
    expect(() => process.kill(other.pid, 0)).toThrow(/ESRCH/);
    // Nothing is left in Apache's process group either.
    expect(() => process.kill(-other.pid, 0)).toThrow(/ESRCH/);
  });
});
