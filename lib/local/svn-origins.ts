/**
 * Subversion origins on 127.0.0.1 for tests: `svnserve` in the foreground over a root directory
 * (every repository under it is `svn://127.0.0.1:<port>/<name>`), anonymous read when no users
 * are given, otherwise no anonymous access and a plain `passwd` file of the given users.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from './ports.ts';

export interface SvnServer {
  readonly port: number;
  /** `svn://127.0.0.1:<port>/<repoPath>` (`repoPath` relative to the served root). */
  url(repoPath?: string): string;
  close(): Promise<void>;
}

export interface SvnServeOptions {
  /** username → password; when given, anonymous access is refused. */
  readonly users?: Readonly<Record<string, string>>;
  /** The realm svnserve names in its auth challenge (default `svn-test`). */
  readonly realm?: string;
}

/** `svnserve -d --foreground` over `root` with one config file for every repository under it. */
export async function serveSvn(root: string, options: SvnServeOptions = {}): Promise<SvnServer> {
  const confDir = await mkdtemp(join(tmpdir(), 'svnserve-conf-'));
  const conf = join(confDir, 'svnserve.conf');
  const lines = ['[general]', `realm = ${options.realm ?? 'svn-test'}`];
  if (options.users) {
    const passwd = join(confDir, 'passwd');
    await writeFile(
      passwd,
      `[users]\n${Object.entries(options.users)
        .map(([user, password]) => `${user} = ${password}`)
        .join('\n')}\n`,
    );
    lines.push('anon-access = none', 'auth-access = write', `password-db = ${passwd}`);
  } else lines.push('anon-access = read', 'auth-access = write');
  await writeFile(conf, `${lines.join('\n')}\n`);
  const port = await freePort();
  const child = spawn(
    'svnserve',
    [
      '-d',
      '--foreground',
      '--listen-host',
      '127.0.0.1',
      '--listen-port',
      String(port),
      '-r',
      root,
      '--config-file',
      conf,
    ],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: confDir }, stdio: 'ignore', detached: true },
  );
  for (let tries = 0; ; tries++) {
    if (await canConnect(port)) break;
    if (child.exitCode !== null || tries > 200) throw new Error('svnserve did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url: (repoPath = '') => `svn://127.0.0.1:${port}/${repoPath.replace(/^\/+/, '')}`,
    close: async () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone
      }
      if (child.exitCode === null) await new Promise((resolve) => child.once('close', resolve));
      await rm(confDir, { recursive: true, force: true });
    },
  };
}
