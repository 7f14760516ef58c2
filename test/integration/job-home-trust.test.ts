import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitFailed, prepareHome, runGit } from '#vcs/git-command';

const run = promisify(execFile);

/**
 * What a job's HOME trusts when another user owns the repositories, as on EFS behind an access
 * point: exactly the repositories it names, through every git a git call starts (a local clone's
 * upload-pack among them), and nothing else. Needs root, to give the repositories another owner
 * (CI runs as root; the deployed project covers the same path end to end).
 */

const OTHER_USER = 1000;
let root: string;
let home: string;
let trusted: string;
let stranger: string;

const local = (cwd: string, args: string[]) =>
  runGit(args, { cwd, home, transport: 'local', timeoutMs: 30_000 });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'job-home-trust-'));
  home = join(root, 'home');
  trusted = join(root, 'raw.git');
  stranger = join(root, 'elsewhere.git');
  for (const repo of [trusted, stranger]) await run('git', ['init', '-q', '--bare', repo]);
  await run('chown', ['-R', `${OTHER_USER}:${OTHER_USER}`, trusted, stranger]);
  await prepareHome(home, [trusted, join(root, 'out.git')]);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.runIf(process.getuid?.() === 0)('a job home over repositories another user owns', () => {
  it('opens the repositories it names', async () => {
    expect((await local(trusted, ['rev-parse', '--git-dir'])).toString().trim()).toBe('.');
  });

  it('clones from them locally: the upload-pack side trusts them too', async () => {
    await local(root, ['clone', '--bare', '--quiet', trusted, join(root, 'out.git')]);
    expect(
      (await local(join(root, 'out.git'), ['rev-parse', '--is-bare-repository'])).toString().trim(),
    ).toBe('true');
  });

  it('refuses every other repository, as git does by default', async () => {
    const refused = await local(stranger, ['rev-parse', '--git-dir']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GitFailed);
    expect((refused as GitFailed).stderr).toContain('detected dubious ownership');
  });
});

describe('a job home prepared again', () => {
  it('keeps a config that already trusts what is asked (a later step’s fewer repositories), and replaces one that does not', async () => {
    const again = join(root, 'again');
    const [a, b, c] = ['a.git', 'b.git', 'c.git'].map((name) => join(root, name));
    await prepareHome(again, [a ?? '', b ?? '']);
    const config = join(again, '.gitconfig');
    const first = await stat(config);
    await new Promise((resolve) => setTimeout(resolve, 20));

    await prepareHome(again, [a ?? '']);
    await prepareHome(again, [b ?? '', a ?? '']);
    expect((await stat(config)).ino).toBe(first.ino);

    await prepareHome(again, [c ?? '']);
    const text = await readFile(config, 'utf8');
    expect(text).toContain(`directory = "${c}"`);
    expect(text).not.toContain(`directory = "${a}"`);
    // A path that only begins like a trusted one is not trusted by it.
    await prepareHome(again, [`${c}x`]);
    expect(await readFile(config, 'utf8')).toContain(`directory = "${c}x"`);
  });
});
