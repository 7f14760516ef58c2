/**
 * Subversion over HTTP on 127.0.0.1 for tests and benchmarks: a private Apache (`apache2 -X`, one
 * process, its own config, pid file, error log and runtime dir in a temp dir) with `mod_dav_svn`
 * serving every repository under `parentPath` (`SVNParentPath`) at `/svn` without credentials and,
 * when users are given, at `/private` behind Basic auth (an `AuthUserFile` of `{SHA}` hashes, which
 * Apache accepts and Node can make without the `htpasswd` binary). With `tls`, it serves https
 * (`mod_ssl`) with the given key and certificate.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from './ports.ts';

export const APACHE_BINARY = '/usr/sbin/apache2';
export const APACHE_MODULES = '/usr/lib/apache2/modules';
const OPERATIONS_LOG = 'operations.log';

/** `svn` needs no credentials; `private` answers 401 without the Basic credentials of a user. */
export type SvnHttpLocation = 'svn' | 'private';

export interface SvnHttpServer {
  readonly port: number;
  /** Apache's process id (the whole server with `-X`). */
  readonly pid: number;
  /** `http(s)://127.0.0.1:<port>/<location>/<repoName>` (`repoName` may be empty for the location itself). */
  url(repoName: string, location?: SvnHttpLocation): string;
  /**
   * mod_dav_svn's log of what clients asked for so far, one action a line (`replay /svn/x r5`,
   * `get-dir …`): what an importer fetched.
   */
  operations(): Promise<string[]>;
  /** Stops Apache (its process group) and removes its temp dir; nothing of it keeps running. */
  close(): Promise<void>;
}

export interface SvnHttpOptions {
  /** A directory whose children are repositories (`svnadmin create`), each served by its name. */
  readonly parentPath: string;
  /** username → password for `/private`; without users there is no `/private`. */
  readonly users?: Readonly<Record<string, string>>;
  /** PEM key and certificate (for 127.0.0.1): serve https instead of http. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /**
   * Turn off mod_dav_svn's in-memory cache (`SVNInMemoryCacheSize 0`): a repository replaced in
   * place (moved away, created again with the same UUID) is otherwise served from the old one's
   * cached revisions until Apache restarts.
   */
  readonly noCache?: boolean;
}

const MODULES = [
  ['mpm_event_module', 'mod_mpm_event.so'],
  ['authn_core_module', 'mod_authn_core.so'],
  ['authn_file_module', 'mod_authn_file.so'],
  ['authz_core_module', 'mod_authz_core.so'],
  ['authz_user_module', 'mod_authz_user.so'],
  ['auth_basic_module', 'mod_auth_basic.so'],
  ['dav_module', 'mod_dav.so'],
  ['dav_svn_module', 'mod_dav_svn.so'],
] as const;

/** Apache's `{SHA}` password form: base64 of the SHA-1 digest (Apache compares it as is). */
export const shaPasswordLine = (user: string, password: string): string =>
  `${user}:{SHA}${createHash('sha1').update(password).digest('base64')}`;

async function requireApache(): Promise<void> {
  for (const file of [APACHE_BINARY, ...MODULES.map(([, so]) => join(APACHE_MODULES, so))]) {
    try {
      await access(file);
    } catch {
      throw new Error(
        `Apache with mod_dav_svn is missing (${file} not found): run \`bash scripts/setup.sh\``,
      );
    }
  }
}

function httpdConf(dir: string, port: number, options: SvnHttpOptions): string {
  const lines = [
    `ServerRoot "${dir}"`,
    'ServerName 127.0.0.1',
    `Listen 127.0.0.1:${port}`,
    `PidFile "${join(dir, 'httpd.pid')}"`,
    `ErrorLog "${join(dir, 'error.log')}"`,
    `DefaultRuntimeDir "${dir}"`,
    `Mutex file:${dir} default`,
    'LogLevel error',
    // mod_dav_svn's operational log: one line per high-level action (`replay /path r5`, ...).
    `CustomLog "${join(dir, OPERATIONS_LOG)}" "%{SVN-ACTION}e" env=SVN-ACTION`,
    ...MODULES.map(([name, so]) => `LoadModule ${name} "${join(APACHE_MODULES, so)}"`),
    ...(options.tls
      ? [
          `LoadModule ssl_module "${join(APACHE_MODULES, 'mod_ssl.so')}"`,
          'SSLEngine on',
          `SSLCertificateFile "${join(dir, 'tls-cert.pem')}"`,
          `SSLCertificateKeyFile "${join(dir, 'tls-key.pem')}"`,
        ]
      : []),
    // Tests start several imports at once; a dump of a big revision range is one long request.
    'ThreadsPerChild 16',
    ...(options.noCache ? ['SVNInMemoryCacheSize 0'] : []),
    'Timeout 600',
    '<Location /svn>',
    '  DAV svn',
    `  SVNParentPath "${options.parentPath}"`,
    '  Require all granted',
    '</Location>',
  ];
  if (options.users) {
    lines.push(
      '<Location /private>',
      '  DAV svn',
      `  SVNParentPath "${options.parentPath}"`,
      '  AuthType Basic',
      '  AuthName "Subversion (private)"',
      `  AuthUserFile "${join(dir, 'users')}"`,
      '  Require valid-user',
      '</Location>',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Starts Apache and resolves once it accepts connections; rejects with its error log if it exits. */
export async function serveSvnHttp(options: SvnHttpOptions): Promise<SvnHttpServer> {
  await requireApache();
  const dir = await mkdtemp(join(tmpdir(), 'svn-http-'));
  const port = await freePort();
  if (options.users) {
    const lines = Object.entries(options.users).map(([user, password]) => shaPasswordLine(user, password));
    await writeFile(join(dir, 'users'), `${lines.join('\n')}\n`, { mode: 0o600 });
  }
  if (options.tls) {
    await writeFile(join(dir, 'tls-key.pem'), options.tls.key, { mode: 0o600 });
    await writeFile(join(dir, 'tls-cert.pem'), options.tls.cert);
  }
  const conf = join(dir, 'httpd.conf');
  await writeFile(conf, httpdConf(dir, port, options));
  // -X: one process in the foreground, so the spawned pid is Apache itself and no worker is left.
  const child = spawn(APACHE_BINARY, ['-X', '-f', conf, '-DFOREGROUND'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
    stdio: 'ignore',
    detached: true,
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const stop = () => stopApache(child, dir);
  for (let tries = 0; ; tries++) {
    if (await canConnect(port)) break;
    if (exited || tries > 200) {
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      await stop();
      throw new Error(`Apache did not start on 127.0.0.1:${port}: ${log.trim() || 'no error log'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    pid: child.pid ?? 0,
    url: (repoName, location = 'svn') =>
      `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/${location}/${repoName.replace(/^\/+/, '')}`,
    operations: async () =>
      (await readFile(join(dir, OPERATIONS_LOG), 'utf8').catch(() => '')).split('\n').filter(Boolean),
    close: stop,
  };
}

async function stopApache(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const closed = new Promise((resolve) => child.once('close', resolve));
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5_000);
    await closed;
    clearTimeout(timer);
  }
  await rm(dir, { recursive: true, force: true });
}
