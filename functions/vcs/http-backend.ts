/**
 * Git smart HTTP by the real `git http-backend` (CGI), one process per request, over the hosted
 * bare repositories. Git runs with a clean environment: no system or global configuration, an
 * empty HOME, no hooks, and receive-pack enabled only when the caller asks for it (the service
 * decides who may push; http-backend never sees a user database). A push passes git's own object
 * checks (`receive.fsckObjects`, strict as for a fetch: no `..` or `.git` lookalike in a tree) or
 * is refused with git's message, as imports are (`history-check.ts`).
 */

import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fsckLeniency } from './fsck-policy.ts';

const run = promisify(execFile);

/** Within API Gateway's 29 s integration timeout, with time left to answer. */
const BACKEND_TIMEOUT_MS = 25_000;
/** Where git lives locally and in a Lambda layer; nothing else is on the PATH. */
const GIT_PATH = '/usr/local/bin:/usr/bin:/bin:/opt/bin';

export interface BackendRequest {
  /** The bare repository to serve. */
  readonly repositoryPath: string;
  readonly method: 'GET' | 'POST';
  /** `/info/refs`, `/git-upload-pack` or `/git-receive-pack`. */
  readonly service: '/info/refs' | '/git-upload-pack' | '/git-receive-pack';
  readonly query: string;
  readonly contentType?: string | undefined;
  /** `Content-Encoding` (git gzips large upload-pack requests). */
  readonly contentEncoding?: string | undefined;
  /** The `Git-Protocol` header (protocol v2 negotiation). */
  readonly gitProtocol?: string | undefined;
  readonly body: Buffer;
  /** Set for an authorised push: enables receive-pack and names the pusher in the reflog. */
  readonly pusher?: string | undefined;
}

export interface BackendResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** A clean environment for every git process the service runs itself. */
export function gitEnvironment(home: string): NodeJS.ProcessEnv {
  return {
    PATH: GIT_PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
  };
}

let emptyHome: Promise<string> | undefined;
/** An empty directory used as HOME, made once per process. */
const home = (): Promise<string> => {
  emptyHome ??= mkdtemp(join(tmpdir(), 'git-home-'));
  return emptyHome;
};

let emptyRepository: Promise<string> | undefined;
/**
 * An empty bare repository, made once per process: what a repository without a bare repository
 * yet (never pushed to) is served from, so clones of it work without creating anything on EFS.
 */
export function emptyRepositoryPath(): Promise<string> {
  emptyRepository ??= (async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'git-empty-')), 'empty.git');
    await initBare(path, 'main');
    return path;
  })();
  return emptyRepository;
}

async function initBare(path: string, defaultBranch: string): Promise<void> {
  await run('git', ['init', '--quiet', '--bare', '--template=', `--initial-branch=${defaultBranch}`, path], {
    env: gitEnvironment(await home()),
  });
}

/**
 * Makes the bare repository at `path` if it does not exist yet (the first push), with HEAD on
 * `defaultBranch`. Made beside the target and renamed into place, so two first pushes at once
 * never see a half-made repository.
 */
export async function ensureBareRepository(path: string, defaultBranch: string): Promise<void> {
  if (await exists(path)) return;
  await mkdir(dirname(path), { recursive: true });
  const staging = await mkdtemp(join(dirname(path), `.${basename(path)}-`));
  try {
    await initBare(staging, defaultBranch);
    await rename(staging, path).catch(async (error: NodeJS.ErrnoException) => {
      // Another request made it first: theirs is as good as ours.
      if (!(await exists(path))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

export const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What a push changed, for the repository's `size` and whether it has content. */
export interface RepositoryStats {
  /** Loose and packed objects in KiB (`git count-objects -v`: size + size-pack), GitHub's unit. */
  readonly sizeKiB: number;
  /** Whether any ref exists. */
  readonly hasContent: boolean;
}

export async function repositoryStats(path: string): Promise<RepositoryStats> {
  const env = { ...gitEnvironment(await home()), GIT_DIR: path };
  const [counts, refs] = await Promise.all([
    run('git', ['count-objects', '-v'], { env }),
    run('git', ['for-each-ref', '--count=1', '--format=%(refname)'], { env }),
  ]);
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(counts.stdout)?.[1] ?? 0);
  return { sizeKiB: field('size') + field('size-pack'), hasContent: refs.stdout.trim() !== '' };
}

/** Only sane values of client headers reach the CGI environment. */
const TOKEN_LIKE = /^[\x20-\x7e]{1,256}$/;

/** Git config as `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` variables (read after every config file). */
const configEnvironment = (pairs: readonly (readonly [string, string])[]): Record<string, string> =>
  Object.fromEntries([
    ['GIT_CONFIG_COUNT', String(pairs.length)],
    ...pairs.flatMap(([key, value], index) => [
      [`GIT_CONFIG_KEY_${index}`, key],
      [`GIT_CONFIG_VALUE_${index}`, value],
    ]),
  ]);

/** Runs `git http-backend` for one request and parses its CGI response. */
export async function runHttpBackend(request: BackendRequest): Promise<BackendResponse> {
  const receivePack = request.pusher !== undefined;
  const env: NodeJS.ProcessEnv = {
    ...gitEnvironment(await home()),
    GIT_PROJECT_ROOT: dirname(request.repositoryPath),
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${basename(request.repositoryPath)}${request.service}`,
    REQUEST_METHOD: request.method,
    QUERY_STRING: request.query,
    CONTENT_TYPE: request.contentType ?? '',
    CONTENT_LENGTH: String(request.body.length),
    ...configEnvironment([
      ['http.receivepack', receivePack ? 'true' : 'false'],
      ['core.hooksPath', '/dev/null'],
      ['http.uploadarch', 'false'],
      ['receive.fsckObjects', 'true'],
      ...fsckLeniency('receive.fsck'),
    ]),
    ...(receivePack ? { REMOTE_USER: request.pusher, REMOTE_ADDR: '127.0.0.1' } : {}),
    ...(request.contentEncoding && TOKEN_LIKE.test(request.contentEncoding)
      ? { HTTP_CONTENT_ENCODING: request.contentEncoding }
      : {}),
    ...(request.gitProtocol && TOKEN_LIKE.test(request.gitProtocol)
      ? { HTTP_GIT_PROTOCOL: request.gitProtocol }
      : {}),
  };
  const output = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), BACKEND_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const out = Buffer.concat(chunks);
      // http-backend exits non-zero after writing its own error response (e.g. 403 for a
      // disabled service); a process that wrote nothing failed.
      if (out.length === 0 && (code !== 0 || signal))
        reject(
          new Error(
            `git http-backend failed (${signal ?? code}): ${Buffer.concat(errors).toString().slice(0, 500)}`,
          ),
        );
      else resolve(out);
    });
    // A client that hangs up early closes stdin under us; the exit status reports the outcome.
    child.stdin.on('error', () => undefined);
    child.stdin.end(request.body);
  });
  return parseCgiResponse(output);
}

/** Splits a CGI response into its `Status`, headers and body. */
export function parseCgiResponse(output: Buffer): BackendResponse {
  let end = output.indexOf('\r\n\r\n');
  let separator = 4;
  const lf = output.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) {
    end = lf;
    separator = 2;
  }
  if (end < 0) throw new Error('git http-backend wrote no CGI header block');
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of output.subarray(0, end).toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 1) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers, body: output.subarray(end + separator) };
}
