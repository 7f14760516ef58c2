/**
 * Running `hg` on hostile input, as `git-command.ts` does for git: a clean environment (no system
 * or user config, `HGPLAIN`, no extensions, no prompts), the job's own HOME, a time limit that
 * kills the whole process group, and a cap on what it may print. Credentials never appear in
 * arguments: a call that needs them gets a private config file (`HGRCPATH`) with an `[auth]`
 * section, written by `withAuthConfig` and deleted after the call.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBounded } from './bounded-process.ts';

export interface HgRun {
  readonly cwd: string;
  /** The job's private home (see `prepareHome`). */
  readonly home: string;
  readonly timeoutMs: number;
  /** The only config file hg reads (none when absent). */
  readonly hgrc?: string;
  /**
   * Each line hg writes to stderr (split on CR and LF). With it, hg also prints its progress bars
   * (`changesets [==>   ] 47/1999`), which `HGPLAIN` otherwise hides.
   */
  readonly onProgress?: (line: string) => void;
  /** How often hg redraws a progress bar (default 0.1 s; 0: on every step, about 240 bytes a changeset). */
  readonly progressRefreshSeconds?: number;
  readonly maxStdoutBytes?: number;
  readonly signal?: AbortSignal;
}

/** An hg call that failed: exit code and the tail of what it printed, URL credentials removed. */
export class HgFailed extends Error {
  override readonly name = 'HgFailed';
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly timedOut: boolean,
  ) {
    super(`hg ${args[0] ?? ''} ${timedOut ? 'timed out' : `exited with ${exitCode}`}: ${stderr.slice(-500)}`);
  }
}

/** The whole environment of an hg call (also of the conversion program, which loads Mercurial): nothing inherited but PATH. */
export function hgEnvironment(home: string, hgrc?: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    HGRCPATH: hgrc ?? '',
    HGPLAIN: '1',
    HGENCODING: 'utf-8',
    HGUSER: 'importer',
    LC_ALL: 'C',
  };
}

const BASE_ARGS = [
  '--noninteractive',
  '--config',
  'ui.interactive=false',
  '--config',
  'ui.merge=internal:fail',
];

export function runHg(args: readonly string[], options: HgRun): Promise<Buffer> {
  const progress = options.onProgress
    ? [
        '--config',
        'progress.assume-tty=true',
        '--config',
        'progress.delay=0',
        '--config',
        'progress.changedelay=0',
        '--config',
        `progress.refresh=${options.progressRefreshSeconds ?? 0.1}`,
        '--config',
        'progress.width=80',
      ]
    : [];
  const env = hgEnvironment(options.home, options.hgrc);
  return runBounded(
    'hg',
    [...BASE_ARGS, ...progress, ...args],
    { ...options, env: options.onProgress ? { ...env, HGPLAINEXCEPT: 'progress' } : env },
    (code, stderr, timedOut) => new HgFailed(args, code, stderr, timedOut),
  );
}

/**
 * Runs `call` with a private config file (mode 600, in the job's HOME) holding `extra` config and,
 * with credentials, an `[auth]` section for `url`'s scheme, host and path; the file is deleted
 * afterwards whatever happens. hg reads passwords only from config, never from its arguments.
 */
export async function withHgConfig<T>(
  home: string,
  extra: string,
  auth: { url: string; username: string; password: string } | undefined,
  call: (hgrc: string) => Promise<T>,
): Promise<T> {
  const path = join(home, `hgrc-${randomBytes(6).toString('hex')}`);
  const lines = [extra];
  if (auth) {
    const url = new URL(auth.url);
    const line = (value: string) => value.replace(/[\r\n]/g, '');
    lines.push(
      '[auth]',
      `origin.prefix = ${line(`${url.host}${url.pathname}`)}`,
      `origin.schemes = ${url.protocol.replace(/:$/, '')}`,
      `origin.username = ${line(auth.username)}`,
      `origin.password = ${line(auth.password)}`,
    );
  }
  await writeFile(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  try {
    return await call(path);
  } finally {
    await rm(path, { force: true });
  }
}
