import { execFile } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface GitResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The `git` command line as a user runs it, with a private HOME and global config (Git LFS's
 * filters installed there) and no stored credentials: a password reaches git only through
 * GIT_ASKPASS from this process's environment.
 */
export async function gitClient(): Promise<
  (args: string[], options?: { cwd?: string; password?: string }) => Promise<GitResult>
> {
  const home = await mkdtemp(join(tmpdir(), 'git-client-'));
  const config = join(home, 'gitconfig');
  await writeFile(
    config,
    [
      '[init]\n\tdefaultBranch = main',
      '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true',
      '[user]\n\tname = Test Client\n\temail = client@example.com',
      '',
    ].join('\n'),
  );
  const askpass = join(home, 'askpass.sh');
  await writeFile(askpass, '#!/bin/sh\nprintf "%s\\n" "$TEST_GIT_PASSWORD"\n');
  await chmod(askpass, 0o700);
  return async (args, options = {}) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_GLOBAL: config,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      ...(options.password === undefined
        ? {}
        : { GIT_ASKPASS: askpass, TEST_GIT_PASSWORD: options.password }),
    };
    try {
      const { stdout, stderr } = await run('git', args, {
        cwd: options.cwd ?? home,
        env,
        maxBuffer: 256 << 20,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
  };
}

/** `git ls-remote` as sorted `<id> <ref>` lines: branches, tags (with their peeled ids) and HEAD's target. */
export async function remoteRefs(
  git: Awaited<ReturnType<typeof gitClient>>,
  url: string,
  password?: string,
): Promise<string[]> {
  const result = await git(
    ['ls-remote', '--heads', '--tags', url],
    password === undefined ? {} : { password },
  );
  if (result.code !== 0) throw new Error(`ls-remote ${url}: ${result.stderr}`);
  return result.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace('\t', ' '))
    .sort();
}
