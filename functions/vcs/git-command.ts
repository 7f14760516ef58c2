/**
 * Running `git` on hostile input. Every call gets a clean environment (no system or user config,
 * no prompts, no hooks, no credential helpers, only the transports the call needs), its own HOME,
 * a time limit that kills the whole process group, and a cap on what it may print. Credentials
 * never appear in arguments, the environment or a file: a network call gets them once, on a
 * descriptor, through a credential helper scoped to the origin (see `originCredentials`).
 */
import { chmod, mkdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { toolPath } from '#shared/tool-path';
import { runBounded } from './bounded-process.ts';
import { writeWhole, writeWholeIfChanged } from './whole-file.ts';

/** Which transports a call may use: the origin's network protocols, or local paths only. */
export type Transport = 'network' | 'local';

export interface GitRun {
  /** Working directory (a repository, or where one is made). */
  readonly cwd: string;
  /** The job's private home: holds nothing but what this module writes there. */
  readonly home: string;
  readonly transport: Transport;
  readonly timeoutMs: number;
  /** Extra environment (proxy settings); never logged. */
  readonly env?: Readonly<Record<string, string>>;
  /** Handed to git on a descriptor for its credential helper (see `originCredentials`). */
  readonly secret?: string;
  readonly input?: string | Buffer;
  /** Each progress line git writes to stderr (split on CR and LF). */
  readonly onProgress?: (line: string) => void;
  /** Largest stdout kept (default 256 MiB); more fails the call. */
  readonly maxStdoutBytes?: number;
  /** Kills the call's process group (e.g. when the work dir grows over its size limit). */
  readonly signal?: AbortSignal;
}

/** A git call that failed: exit code and the tail of what it printed, credentials removed. */
export class GitFailed extends Error {
  override readonly name = 'GitFailed';
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly timedOut: boolean,
    /** The tail of stdout, where some commands report (`git fsck`). */
    readonly stdout = '',
  ) {
    super(
      `git ${args[0] ?? ''} ${timedOut ? 'timed out' : `exited with ${exitCode}`}: ${stderr.slice(-500)}`,
    );
  }
}

const NETWORK_PROTOCOLS = 'http:https:git';
const LOCAL_PROTOCOLS = 'file';

/** Config every call runs with (`-c` wins over every file, and no files are read anyway). */
function configArgs(transport: Transport): string[] {
  const allowed = transport === 'network' ? ['http', 'https', 'git'] : ['file'];
  return [
    '-c',
    'protocol.allow=never',
    ...allowed.flatMap((name) => ['-c', `protocol.${name}.allow=always`]),
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'credential.helper=',
    '-c',
    'core.fsmonitor=false',
    '-c',
    'http.followRedirects=initial',
    '-c',
    'advice.detachedHead=false',
    '-c',
    'init.defaultBranch=main',
  ];
}

/** The whole environment of a git call: nothing inherited but PATH. */
export function gitEnvironment(
  home: string,
  transport: Transport,
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: toolPath(),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: jobGitConfig(home),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: transport === 'network' ? NETWORK_PROTOCOLS : LOCAL_PROTOCOLS,
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_SSH_COMMAND: '/bin/false',
    GIT_PROTOCOL_FROM_USER: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

/** Runs `git <args>`; resolves with stdout, rejects with `GitFailed`. */
export function runGit(args: readonly string[], options: GitRun): Promise<Buffer> {
  return runBounded(
    'git',
    [...configArgs(options.transport), ...args],
    { ...options, env: gitEnvironment(options.home, options.transport, options.env) },
    (code, stderr, timedOut, stdout) => new GitFailed(args, code, stderr, timedOut, stdout),
  );
}

/**
 * The job's own global git config, the only config file its git calls read (`GIT_CONFIG_GLOBAL`;
 * no system config). It passes to every git the job's git starts, `upload-pack` of a local clone
 * among them, which `-c` options and `GIT_CONFIG_COUNT` do not reach.
 */
export const jobGitConfig = (home: string): string => join(home, '.gitconfig');

/**
 * A private HOME for one job: created empty (mode 700), so nothing is shared or cached between
 * users, with the credential helper that hands git the origin's credentials, and a git config
 * that trusts `repositories` (`safe.directory`), each by its own path. A config that trusts them
 * already (and more of the same job's, as an earlier call of the job wrote it) is left as it is:
 * a git of the job may be reading it, and each rewrite is a write and a rename on EFS.
 *
 * In AWS the workers run as Lambda's user while the file system's access point makes every file
 * belong to its own user, and git (since 2.35.2) refuses a repository another user owns. Trusting
 * the job's repositories one by one, in the job's config, trusts nothing else: not a global
 * setting of the image, not `*`, not a repository some other path leads to.
 */
export async function prepareHome(home: string, repositories: readonly string[]): Promise<void> {
  await mkdir(join(home, '.config'), { recursive: true, mode: 0o700 });
  await chmod(home, 0o700);
  // Whole, and only when they change: a git of the step may be reading them.
  await writeWholeIfChanged(join(home, CREDENTIAL_HELPER), CREDENTIAL_HELPER_PROGRAM, 0o700);
  const paths = new Set<string>();
  for (const repository of repositories) {
    paths.add(repository);
    // git compares the path it found the repository at, which is physical (`getcwd`).
    paths.add(
      join(await realpath(dirname(repository)).catch(() => dirname(repository)), basename(repository)),
    );
  }
  const config = jobGitConfig(home);
  const trusted = await readFile(config, 'utf8').catch(() => undefined);
  if (trusted !== undefined && [...paths].every((path) => trusted.includes(safeDirectory(path)))) return;
  await writeWhole(config, safeDirectories([...paths]), 0o600);
}

/** One path of a `[safe]` section: a quoted value (`\\` and `"` escaped). */
const safeDirectory = (path: string): string => `\tdirectory = "${path.replace(/[\\"]/g, '\\$&')}"\n`;

/** A git config file's `[safe]` section. */
const safeDirectories = (paths: readonly string[]): string =>
  paths.length === 0 ? '' : `[safe]\n${paths.map(safeDirectory).join('')}`;

const CREDENTIAL_HELPER = 'credential-helper';

/**
 * A git credential helper (`<helper> <protocol> <host[:port]> get`) that answers only a request
 * for exactly that protocol and host: the credentials come from descriptor 3 (`runBounded`'s
 * `secret`), which the first answer drains. Git asks a helper only for URLs its config key
 * matches, and this checks again what git says it is asking for, so a redirect to another host or
 * port gets nothing (git then fails with "could not read Username": `auth_failed`).
 */
const CREDENTIAL_HELPER_PROGRAM = `#!/bin/sh
want_protocol=$1 want_host=$2 action=$3
protocol= host=
while IFS= read -r line; do
  case "$line" in
    protocol=*) protocol=\${line#protocol=} ;;
    host=*) host=\${line#host=} ;;
  esac
done
[ "$action" = get ] && [ "$protocol" = "$want_protocol" ] && [ "$host" = "$want_host" ] && cat <&3
exit 0
`;

/** One line of git's credential protocol: no line breaks, no NUL. */
const credentialValue = (value: string) => value.replace(/[\r\n\0]/g, '');

/**
 * What a network call needs to send `credentials` to `originUrl`'s scheme, host and port and
 * nowhere else: `-c` options naming the helper for that origin only, and the `secret` to run git
 * with (use with `prepareHome`). Git counts a missing port as the scheme's default.
 */
export function originCredentials(
  home: string,
  originUrl: string,
  credentials: { readonly username: string; readonly password: string },
): { readonly args: readonly string[]; readonly secret: string } {
  const url = new URL(originUrl);
  const protocol = url.protocol.replace(/:$/, '');
  const origin = `${protocol}://${url.host}`;
  return {
    args: ['-c', `credential.${origin}.helper=${join(home, CREDENTIAL_HELPER)} ${protocol} ${url.host}`],
    secret: `username=${credentialValue(credentials.username)}\npassword=${credentialValue(credentials.password)}\n`,
  };
}

/** Commits reachable from any ref of a local repository (0 when it has no ref yet). */
export async function countCommits(repo: string, home: string): Promise<number> {
  const local = (args: readonly string[]) =>
    runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000 });
  const refs = (await local(['for-each-ref', '--count=1', '--format=%(refname)'])).toString().trim();
  if (refs === '') return 0;
  return Number((await local(['rev-list', '--all', '--count'])).toString().trim());
}
