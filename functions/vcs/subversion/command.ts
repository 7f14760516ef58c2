/**
 * Running the Subversion tools on hostile input, as `git-command.ts` and `mercurial/command.ts` do for git
 * and hg: a clean environment, the job's own HOME, a time limit that kills the whole process group
 * and a cap on what a tool may print (`runBounded`).
 *
 * The network tools (`svn`, `svnrdump`) get a private `--config-dir` per call, created in the
 * job's HOME (mode 700) and deleted afterwards, with `--non-interactive --no-auth-cache`: nothing
 * is cached between calls or users. Credentials never appear in arguments: the password is written
 * to the tool's stdin (`--password-from-stdin`), the username is the `username` setting of that
 * private `servers` file (mode 600), which svn's simple auth provider uses as the default username
 * for every realm (the guard proxy, pinned to the origin, is what keeps them to the origin).
 *
 * Every connection goes through the guard proxy: http(s) by the `servers` file's proxy with no
 * exceptions (so loopback is not bypassed), `svn://` as `svn+guard://` whose `[tunnels]` agent is
 * the guard's tunnel program; `svn+ssh://` runs `false`, never ssh. An https origin is intercepted
 * by the proxy: svn trusts only the job's certificate (`ssl-authority-files`, no default CAs).
 * `http-timeout` is the guard's idle limit.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { toolPath } from '#shared/tool-path';
import { redactCredentials, runBounded } from '../bounded-process.ts';
import { jobGitConfig } from '../git-command.ts';
import { TUNNEL_PROGRAM } from '../network-guard.ts';
import type { OriginCredentials } from '../origin.ts';

export type SvnTool = 'svn' | 'svnrdump' | 'svnadmin' | 'svnlook' | 'svn-all-fast-export';

export interface SvnRun {
  readonly cwd: string;
  /** The job's private home (see `prepareHome`). */
  readonly home: string;
  readonly timeoutMs: number;
  /** Network tools only: sent as the username setting and on stdin, never as arguments. */
  readonly credentials?: OriginCredentials | undefined;
  /** Network tools only: the guard proxy's port on 127.0.0.1 (http(s), and `svn+guard://`). */
  readonly proxyPort?: number | undefined;
  /** Network tools only: the one certificate svn trusts (the proxy's, for an intercepted https origin). */
  readonly trustedCertificate?: string | undefined;
  /** Network tools only: svn's `http-timeout`, seconds without a byte from the server (default 60). */
  readonly idleSeconds?: number | undefined;
  /** Each line the tool writes to stderr. */
  readonly onProgress?: ((line: string) => void) | undefined;
  readonly maxStdoutBytes?: number | undefined;
  /** Reads stdout as it comes, instead of keeping it (`BoundedRun.onStdout`). */
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** A Subversion tool call that failed: exit code and the tail of what it printed, the password removed. */
export class SvnFailed extends Error {
  override readonly name = 'SvnFailed';
  constructor(
    readonly tool: SvnTool,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly timedOut: boolean,
  ) {
    super(
      `${tool} ${args[0] ?? ''} ${timedOut ? 'timed out' : `exited with ${exitCode}`}: ${stderr.slice(-500)}`,
    );
  }
}

/** The whole environment of a Subversion tool call: nothing inherited but PATH. */
export function svnEnvironment(home: string): Record<string, string> {
  return {
    PATH: toolPath(),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    LC_ALL: 'C',
    LANG: 'C',
    // svn-all-fast-export runs git fast-import: no system or user git config either.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: jobGitConfig(home),
    GIT_TERMINAL_PROMPT: '0',
  };
}

const NETWORK_TOOLS: ReadonlySet<SvnTool> = new Set(['svn', 'svnrdump']);

/** A value for svn's config files: one line, `%` escaped (svn's config expands `%(name)s`). */
const configValue = (value: string) => value.replace(/[\r\n]/g, '').replace(/%/g, '%%');

export async function runSvn(tool: SvnTool, args: readonly string[], options: SvnRun): Promise<Buffer> {
  const password = options.credentials?.password.replace(/[\r\n]/g, '');
  const scrub = (text: string) =>
    password ? redactCredentials(text).split(password).join('***') : redactCredentials(text);
  const fail = (code: number | null, stderr: string, timedOut: boolean) =>
    new SvnFailed(tool, args, code, scrub(stderr), timedOut);
  const base = { ...options, env: svnEnvironment(options.home) };
  if (!NETWORK_TOOLS.has(tool)) return runBounded(tool, args, base, fail);

  const configDir = join(options.home, `svn-config-${randomBytes(6).toString('hex')}`);
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  const servers = [
    '[global]',
    'store-passwords = no',
    'store-auth-creds = no',
    `http-timeout = ${Math.max(1, Math.round(options.idleSeconds ?? 60))}`,
  ];
  const env = { ...base.env };
  const tunnel = join(configDir, 'guard-tunnel.mjs');
  let tunnels = 'ssh = false\n';
  if (options.proxyPort !== undefined) {
    servers.push(
      'http-proxy-host = 127.0.0.1',
      `http-proxy-port = ${options.proxyPort}`,
      'http-proxy-exceptions =',
    );
    env.IMPORT_GUARD_PROXY = `127.0.0.1:${options.proxyPort}`;
    tunnels += `guard = ${tunnel}\n`;
  }
  if (options.trustedCertificate !== undefined)
    servers.push('ssl-trust-default-ca = no', `ssl-authority-files = ${join(configDir, 'guard-ca.pem')}`);
  if (options.credentials) servers.push(`username = ${configValue(options.credentials.username)}`);
  try {
    await writeFile(join(configDir, 'servers'), `${servers.join('\n')}\n`, { mode: 0o600 });
    // No password stores (keyrings, gpg-agent), no tunnel but the guard's, no auto-props.
    await writeFile(
      join(configDir, 'config'),
      `[auth]\npassword-stores =\n[tunnels]\n${tunnels}[miscellany]\nenable-auto-props = no\n`,
      { mode: 0o600 },
    );
    if (options.proxyPort !== undefined)
      await writeFile(tunnel, TUNNEL_PROGRAM(process.execPath), { mode: 0o700 });
    if (options.trustedCertificate !== undefined)
      await writeFile(join(configDir, 'guard-ca.pem'), options.trustedCertificate, { mode: 0o600 });
    const fixed = ['--non-interactive', '--no-auth-cache', '--config-dir', configDir];
    if (password !== undefined) fixed.push('--password-from-stdin');
    const [command, ...rest] = args;
    return await runBounded(
      tool,
      command === undefined ? fixed : [command, ...fixed, ...rest],
      { ...base, env, input: password !== undefined ? `${password}\n` : '' },
      fail,
    );
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

/** Text of svn's `--xml` output (UTF-8 whatever the locale) with its entities decoded. */
export const decodeXml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/**
 * The `file://` URL of `path` (repository-relative, `/`-separated, '' for the root) in the local
 * repository `repo`, pegged at `revision` (a path's own `@` is then never read as a peg).
 */
export const localUrl = (repo: string, path: string, revision: number | string): string =>
  `${pathToFileURL(repo).href.replace(/\/+$/, '')}${encodeURI(path === '' ? '' : `/${path}`).replace(/[?#]/g, encodeURIComponent)}@${revision}`;
