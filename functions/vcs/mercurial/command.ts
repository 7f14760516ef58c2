/**
 * Running `hg` on hostile input, as `../git-command.ts` does for git: a clean environment (no system
 * or user config, `HGPLAIN`, no extensions but our own, no prompts), the job's own HOME, a time
 * limit that kills the whole process group, and a cap on what it may print. A call that talks to
 * the origin loads the `importguard` extension (`import-guard.ts`); its credentials reach hg only
 * on a file descriptor, never in arguments, the environment or a file.
 */
import { join } from 'node:path';
import { toolPath } from '#shared/tool-path';
import { runBounded } from '#vcs/bounded-process';
import { type HgNetwork, hgGuardArgs } from './import-guard.ts';

export interface HgRun {
  readonly cwd: string;
  /** The job's private home (see `prepareHome`). */
  readonly home: string;
  readonly timeoutMs: number;
  /** The call talks to this origin, only through the guard (see `import-guard.ts`). */
  readonly network?: HgNetwork;
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
export function hgEnvironment(home: string): Record<string, string> {
  return {
    PATH: toolPath(),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    HGRCPATH: '',
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

export async function runHg(args: readonly string[], options: HgRun): Promise<Buffer> {
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
  const guard: { readonly args: readonly string[]; readonly secret?: string } = options.network
    ? await hgGuardArgs(options.home, options.network)
    : { args: [] };
  const env = hgEnvironment(options.home);
  return runBounded(
    'hg',
    [...BASE_ARGS, ...guard.args, ...progress, ...args],
    {
      ...options,
      env: options.onProgress ? { ...env, HGPLAINEXCEPT: 'progress' } : env,
      secret: guard.secret,
    },
    (code, stderr, timedOut) => new HgFailed(args, code, stderr, timedOut),
  );
}
