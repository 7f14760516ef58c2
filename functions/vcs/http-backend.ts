/**
 * Git smart HTTP by the real `git http-backend` (CGI), one process per request, over the hosted
 * bare repositories, streamed both ways (the Git front end runs it; no zip function may). Git runs with a clean environment: no system or global configuration, an
 * empty HOME, no hooks, and receive-pack enabled only when the caller asks for it (the service
 * decides who may push; http-backend never sees a user database). A push passes git's own object
 * checks (`receive.fsckObjects`, strict as for a fetch: no `..` or `.git` lookalike in a tree) or
 * is refused with git's message, as imports are (`history-check.ts`).
 */

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { promisify } from 'node:util';
import { toolPath } from '#shared/tool-path';
import { fsckLeniency } from './fsck-policy.ts';
import { type PushLimits, pushLimitsSettings, SERVE_MEMORY_CONFIG } from './git-limits.ts';
import { spawnGroup } from './process-group.ts';
import { followQuarantine } from './quarantine.ts';
import { repositorySizeKiB } from './repository-size.ts';

const run = promisify(execFile);

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
  /** The request body, piped into http-backend's standard input as it arrives. */
  readonly body: Readable;
  /**
   * The client's `Content-Length`; absent for a chunked body (git sends large pushes chunked),
   * which http-backend then reads to its end.
   */
  readonly contentLength?: number | undefined;
  /** Set for an authorised push: enables receive-pack and names the pusher in the reflog. */
  readonly pusher?: string | undefined;
  /** What a push is held to (with `pusher`): its largest file and pack. */
  readonly pushLimits?: PushLimits | undefined;
  /** Aborted when the client has gone: the process ends, with the git processes it started. */
  readonly signal?: AbortSignal | undefined;
}

/** How a http-backend process ended, once it has. */
export interface BackendOutcome {
  /** Bytes of the request body it was given. */
  readonly requestBytes: number;
  /** Exit code, or the signal that ended it. */
  readonly exit: number | NodeJS.Signals | null;
}

export interface BackendResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The rest of http-backend's output (the pack, the push's report), streamed as it is written. */
  readonly body: Readable;
  /**
   * Settles (never rejects) when the process has exited and its output is read, and, for a push,
   * once what git left of its quarantine is removed (`followQuarantine`).
   */
  readonly finished: Promise<BackendOutcome>;
}

/** The CGI header block parsed, and the bytes of the body that came with it. */
export interface CgiHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** A clean environment for every git process the service runs itself. */
export function gitEnvironment(home: string): NodeJS.ProcessEnv {
  return {
    PATH: toolPath(),
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
 * Makes the bare repository at `path` if it is not one yet (the first push, or the first LFS
 * upload), with HEAD on `defaultBranch`. Made beside the target and renamed into place, so two
 * first requests at once never see a half-made repository. A directory already there without
 * `HEAD` (LFS objects stored before the first push by earlier versions) is filled in instead.
 */
export async function ensureBareRepository(path: string, defaultBranch: string): Promise<void> {
  if (await isBareRepository(path)) return;
  await mkdir(dirname(path), { recursive: true });
  const staging = await mkdtemp(join(dirname(path), `.${basename(path)}-`));
  try {
    await initBare(staging, defaultBranch);
    const placed = await rename(staging, path).then(
      () => true,
      () => false,
    );
    if (!placed && !(await isBareRepository(path))) await moveInto(staging, path);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Moves the staged repository's entries into the directory at `path`, `HEAD` last: it counts as a
 * repository (`isBareRepository`) only once the rest is in place. An entry another request placed
 * first is kept (a non-empty directory is not replaced; files are the same either way).
 */
async function moveInto(staging: string, path: string): Promise<void> {
  const entries = (await readdir(staging)).filter((entry) => entry !== 'HEAD');
  for (const entry of [...entries, 'HEAD'])
    await rename(join(staging, entry), join(path, entry)).catch(async (error: NodeJS.ErrnoException) => {
      if (!(await exists(join(path, entry)))) throw error;
    });
}

/**
 * Whether `path` is a repository: judged by its `HEAD` and `objects/`, as git does, not by the
 * directory. `git init` writes `HEAD` before it makes `objects/`: what an init killed between the
 * two leaves is no repository to git ("not a git repository"), and is made whole here.
 */
export const isBareRepository = async (path: string): Promise<boolean> =>
  (await exists(join(path, 'HEAD'))) && (await exists(join(path, 'objects')));

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What a push changed, for the repository's `size` and whether it has content. */
export interface RepositoryStats {
  /** The repository's `size` in KiB (`repository-size.ts`). */
  readonly sizeKiB: number;
  /** Whether any ref exists. */
  readonly hasContent: boolean;
}

export async function repositoryStats(path: string): Promise<RepositoryStats> {
  const env = { ...gitEnvironment(await home()), GIT_DIR: path };
  const [sizeKiB, refs] = await Promise.all([
    repositorySizeKiB(path),
    run('git', ['for-each-ref', '--count=1', '--format=%(refname)'], { env }),
  ]);
  return { sizeKiB, hasContent: refs.stdout.trim() !== '' };
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

/** A CGI header block longer than this is not git's: the process is refused. */
const MAX_CGI_HEAD_BYTES = 64 * 1024;
/** What is kept of the process's standard error for the failure message. */
const MAX_STDERR_BYTES = 4 * 1024;
/**
 * How long an abandoned push has to end on its own once its body has ended, before its processes
 * are stopped: receive-pack then fails as for a truncated pack and removes its quarantine.
 */
const ABANDONED_PUSH_GRACE_MS = 5_000;

/**
 * Starts `git http-backend` for one request: the request body is piped into it as it arrives
 * (with backpressure), its CGI header block is parsed, and the body after it is handed back as a
 * stream, so neither a push nor a clone is ever held in memory whole. Rejects when the process
 * fails before writing a header block (git missing, a crash); after that, the outcome is in
 * `finished`.
 */
export async function startHttpBackend(request: BackendRequest): Promise<BackendResponse> {
  const receivePack = request.pusher !== undefined;
  const push =
    receivePack && request.pushLimits
      ? await pushLimitsSettings(request.pushLimits)
      : { config: [], env: {} };
  const env: NodeJS.ProcessEnv = {
    ...gitEnvironment(await home()),
    GIT_PROJECT_ROOT: dirname(request.repositoryPath),
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${basename(request.repositoryPath)}${request.service}`,
    REQUEST_METHOD: request.method,
    QUERY_STRING: request.query,
    CONTENT_TYPE: request.contentType ?? '',
    // Not for a push: on a body that stops short of its length, http-backend 2.39 reads end of file
    // forever at full speed (pipe_fixed_length), and on the signal that ends it kills receive-pack,
    // which then leaves its quarantine. Without it receive-pack reads the body itself to its end,
    // which the server has checked against the length, and fails on a short one as on any bad pack.
    ...(request.contentLength === undefined || request.service === '/git-receive-pack'
      ? {}
      : { CONTENT_LENGTH: String(request.contentLength) }),
    ...configEnvironment([
      ['http.receivepack', receivePack ? 'true' : 'false'],
      ['core.hooksPath', '/dev/null'],
      ['http.uploadarch', 'false'],
      ['receive.fsckObjects', 'true'],
      ...fsckLeniency('receive.fsck'),
      ...SERVE_MEMORY_CONFIG,
      // Last: a push's hooks directory replaces the empty one.
      ...push.config,
    ]),
    ...push.env,
    ...(receivePack ? { REMOTE_USER: request.pusher, REMOTE_ADDR: '127.0.0.1' } : {}),
    ...(request.contentEncoding && TOKEN_LIKE.test(request.contentEncoding)
      ? { HTTP_CONTENT_ENCODING: request.contentEncoding }
      : {}),
    ...(request.gitProtocol && TOKEN_LIKE.test(request.gitProtocol)
      ? { HTTP_GIT_PROTOCOL: request.gitProtocol }
      : {}),
  };
  request.signal?.throwIfAborted();
  // The whole group: `git` runs `git-http-backend`, which runs upload-pack or receive-pack, which
  // run pack-objects or index-pack; stopping only the first leaves the others working for no one.
  const { child, stop } = spawnGroup('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  // What a push that git does not finish leaves (a signal ends it) goes before the outcome is known.
  const quarantine =
    request.service === '/git-receive-pack' && child.pid !== undefined
      ? followQuarantine(request.repositoryPath, child.pid)
      : undefined;
  // What the caller reads: it may destroy this stream, never the pipe git writes into (see abandon).
  const body = new PassThrough();
  let abandoned = false;
  let grace: NodeJS.Timeout | undefined;
  // The output of an abandoned request is read and dropped, so that no git process dies on a write
  // into a closed pipe (a signal, on which git leaves its quarantine behind).
  const drain = () => {
    child.stdout.unpipe();
    child.stdout.resume();
  };
  /**
   * The client has gone. A push's body ends where it stopped: index-pack or unpack-objects fails on
   * the truncated pack and receive-pack exits as for any failed push, removing its quarantine
   * (git 2.39 and later remove none on a signal); the group is stopped if it has not ended by then.
   * Anything else (a clone's pack-objects looking for deltas) is stopped at once.
   */
  const abandon = () => {
    abandoned = true;
    request.body.unpipe();
    child.stdin.destroy();
    drain();
    if (request.service === '/git-receive-pack') grace = setTimeout(stop, ABANDONED_PUSH_GRACE_MS);
    else stop();
  };
  request.signal?.addEventListener('abort', abandon, { once: true });
  body.on('close', () => {
    if (!body.readableEnded) drain();
  });
  let requestBytes = 0;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8', 0, MAX_STDERR_BYTES);
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      // Its output is closed: no process of the group is left to stop.
      request.signal?.removeEventListener('abort', abandon);
      clearTimeout(grace);
      resolve(signal ?? code);
    });
  });
  const finished = exited
    .then(
      (exit) => exit,
      () => null,
    )
    .then(async (exit): Promise<BackendOutcome> => {
      await quarantine?.settle();
      return { requestBytes, exit };
    });
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      requestBytes += chunk.length;
      done(null, chunk);
    },
  });
  // http-backend may answer without reading the body (a refused service, a malformed request):
  // the pipe then breaks, and the answer it wrote and its exit status say what happened. The rest
  // of the body is read and dropped: destroying the request would reset the connection under
  // that answer.
  child.stdin.on('error', () => {
    request.body.unpipe();
    request.body.resume();
  });
  request.body.pipe(counted).pipe(child.stdin);

  const head = await readCgiHead(child.stdout);
  if (!head) {
    const exit = await exited;
    throw new Error(`git http-backend failed (${exit}): ${stderr.slice(0, 500)}`);
  }
  if (head.body.length > 0) child.stdout.unshift(head.body);
  if (abandoned) drain();
  else child.stdout.pipe(body);
  return { status: head.status, headers: head.headers, body, finished };
}

/**
 * Reads a CGI output stream up to the end of its header block and leaves the stream paused there
 * (the bytes after the block are in `body`, for the caller to put back); undefined when the
 * stream ended first.
 */
function readCgiHead(stdout: Readable): Promise<CgiHead | undefined> {
  return new Promise((resolve, reject) => {
    let read = Buffer.alloc(0);
    const finish = (result: CgiHead | undefined, error?: Error) => {
      stdout.off('data', onData);
      stdout.off('end', onEnd);
      stdout.off('error', onEnd);
      stdout.pause();
      if (error) reject(error);
      else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      read = Buffer.concat([read, chunk]);
      if (read.includes('\n\n') || read.includes('\r\n\r\n')) return finish(parseCgiResponse(read));
      if (read.length > MAX_CGI_HEAD_BYTES)
        finish(undefined, new Error('git http-backend wrote no CGI header block'));
    };
    const onEnd = () => finish(undefined);
    stdout.on('data', onData);
    stdout.on('end', onEnd);
    stdout.on('error', onEnd);
  });
}

/** Splits a CGI response into its `Status`, headers and body. */
export function parseCgiResponse(output: Buffer): CgiHead {
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
