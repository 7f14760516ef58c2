/**
 * The Git origin adapter: detects Git over smart HTTP, dumb HTTP and `git://`, fetches every
 * branch and tag into `<workDir>/raw.git` in bounded chunks, and lists the authors and committers.
 *
 * Every network call goes through the network guard: Node's probes with `guardedRequest`, git
 * through the guard proxy (`http.proxy`, and `core.gitProxy` for `git://`), so git itself never
 * resolves or dials an origin. Credentials reach git only through a credential helper scoped to
 * the origin's scheme, host and port, on a descriptor that one call drains (`originCredentials`),
 * and Node's probes only in an `Authorization` header; neither is ever logged or put in an error
 * message.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkOriginUrl } from '#domain/origin-url';
import { type AdapterOptions, adapterSetup } from './adapter-options.ts';
import {
  arrivalCheckArgs,
  arrivalTracePath,
  checkedOnArrival,
  fetchChecked,
  markCheckedOnArrival,
  refusedOnArrival,
} from './arrival-check.ts';
import { gitAuthors } from './git-authors.ts';
import {
  countCommits,
  GitFailed,
  type GitRun,
  originCredentials,
  prepareHome,
  runGit,
} from './git-command.ts';
import { reopenGitHistory } from './git-follow.ts';
import { pointHeadAt, remoteHeadBranch } from './git-origin-head.ts';
import { type ChunkPlan, DEFAULT_CHUNK_PLAN, gitCursor } from './git-raw-state.ts';
import { gitWords } from './git-words.ts';
import { checkHistory } from './history-check.ts';
import { isBareRepository } from './http-backend.ts';
import { checkObjects, checkSize, directorySize, oversizeError, tooManyObjectsError } from './limits.ts';
import {
  GIT_TUNNEL_PROGRAM,
  type Guard,
  type GuardProxy,
  guardedRequest,
  startGuardProxy,
} from './network-guard.ts';
import {
  type Detection,
  ForbiddenAddress,
  type OriginAccess,
  type OriginAdapter,
  OriginAuthFailed,
  OriginFailed,
  type RawJob,
  rawRepositoryPath,
} from './origin.ts';
import { keepPacksFew } from './pack-upkeep.ts';
import { saveGitRevisions } from './revision-map.ts';
import { writeWholeIfChanged } from './whole-file.ts';

export interface GitAdapterOptions extends AdapterOptions {
  readonly plan?: Partial<ChunkPlan>;
  /** Time limit of a detection probe (default 30 s). */
  readonly probeTimeoutMs?: number;
}

const REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
const SMART_TYPE = 'application/x-git-upload-pack-advertisement';
const USER_AGENT = 'git/2.39 (source-import)';

export function gitAdapter(options: GitAdapterOptions = {}): OriginAdapter {
  const plan: ChunkPlan = { ...DEFAULT_CHUNK_PLAN, ...options.plan };
  const { maxBytes, maxObjects, guardFor, idleTimeoutMs } = adapterSetup(options);

  return {
    vcs: 'git',

    async detect(access) {
      const url = checkedUrl(access);
      if (url.protocol === 'git:')
        return detectGitProtocol(access, guardFor(access), idleTimeoutMs, options.probeTimeoutMs);
      return detectHttp(url, access, guardFor(access), options.probeTimeoutMs);
    },

    async importRawChunk(job, budgetMs, onProgress) {
      const started = Date.now();
      const url = checkedUrl(job).toString();
      const repo = rawRepositoryPath(job.workDir);
      const home = join(job.workDir, 'home');
      const cursor = gitCursor(budgetMs >= plan.fullFetchMinBudgetMs ? 'full' : 'depth', plan);
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareGitHome(home, [repo]);
      await ensureBareRepository(repo, home);

      const session = await openSession(home, guardFor(job), job, idleTimeoutMs);
      const askHead = () =>
        remoteHeadBranch(url, repo, session).catch((error: unknown) => {
          throw classify(error, session, { url, workDir: repo });
        });
      const followHead = async (branch: Promise<string | null>) => {
        state.defaultBranch = await branch;
        await pointHeadAt(repo, home, state.defaultBranch);
        await cursor.save(job.workDir, state);
      };
      // A sync asks for the origin's HEAD while it fetches: one round trip's wait, not two.
      let syncHead: Promise<string | null> | undefined;
      try {
        // A whole fetch is a `clone --bare`, which records the origin's HEAD itself.
        if (state.defaultBranch === undefined && state.mode === 'depth') await followHead(askHead());
        if (state.defaultBranch === undefined && state.mode === 'sync') {
          syncHead = askHead();
          syncHead.catch(() => undefined);
        }
        const report = (percent: number) => {
          const rounded = Math.min(99, Math.floor(percent));
          if (rounded <= state.percent) return;
          state.percent = rounded;
          onProgress({ commitCount: state.commitCount, percent: state.percent });
        };
        let steps = 0;
        let lastStepMs = 0;
        while (!state.done) {
          const remaining = started + budgetMs - Date.now();
          if (steps > 0 && (remaining <= 0 || lastStepMs * plan.growth > remaining)) break;
          await checkSize(repo, maxBytes);
          const objectsBefore = await checkObjects(repo, maxObjects);
          const from = state.percent;
          // A full fetch may use the whole share up to 99; a depth step half of what is left,
          // because the total is unknown until the repository is no longer shallow.
          const share = state.mode === 'depth' ? (99 - from) / 2 : 99 - from;
          const depthArgs =
            state.mode !== 'depth'
              ? []
              : state.shallowStarted
                ? [`--deepen=${state.step}`]
                : [`--depth=${state.step}`];
          const stepStarted = Date.now();
          const stepOptions = {
            timeoutMs:
              state.mode === 'full' ? Math.max(remaining, 1) : Math.max(remaining, plan.minStepTimeoutMs),
            maxBytes,
            maxObjects: maxObjects - objectsBefore,
            onFraction: (fraction: number) => report(from + share * fraction),
          };
          // A sync fetches into the raw history it kept (`git-follow.ts`).
          const stepArgs = state.mode === 'depth' ? depthArgs : state.mode === 'sync' ? [] : null;
          try {
            await markCheckedOnArrival(repo, false);
            const checked = await fetchChecked((check) =>
              fetchStep(url, repo, session, stepArgs, { ...stepOptions, check }),
            );
            // A whole fetch replaces the repository: what earlier steps left is gone.
            state.checkedOnArrival = checked && (stepArgs === null || state.checkedOnArrival === true);
          } catch (error) {
            if (error instanceof GitFailed && !error.timedOut && refusedOnArrival(error.stderr)) {
              // git refused an object as it arrived and kept nothing: fetch the step again unchecked
              // and let the whole check name the commit and path that hold it.
              await fetchStep(url, repo, session, stepArgs, { ...stepOptions, check: false }).catch(
                (again: unknown) => {
                  throw classify(again, session, job);
                },
              );
              await checkHistory(repo, { home, timeoutMs: 600_000 });
              throw classify(error, session, job);
            }
            if (
              error instanceof GitFailed &&
              state.mode === 'depth' &&
              /does not support shallow/i.test(error.stderr)
            ) {
              // Dumb HTTP cannot fetch by depth: this origin is fetched whole.
              state.mode = 'whole';
              await cursor.save(job.workDir, state);
              continue;
            }
            if (!(error instanceof GitFailed && error.timedOut)) throw classify(error, session, job);
            // The transfer is lost (fetch cannot resume): fetch less history per step from now on
            // (a sync too: its raw history is fetched afresh, by depth).
            if (state.mode === 'full' || state.mode === 'sync') {
              state.mode = 'depth';
              state.checkedOnArrival = true;
              state.defaultBranch = undefined; // the new repository's HEAD is set again
              await rm(repo, { recursive: true, force: true }); // a killed clone leaves a partial repository
            } else if (state.mode === 'depth' && state.step > 1)
              state.step = Math.max(1, Math.floor(state.step / 2));
            else throw new OriginFailed('The origin did not send the history in time');
            await cursor.save(job.workDir, state);
            return { done: false, commitCount: state.commitCount, percent: state.percent };
          }
          steps += 1;
          lastStepMs = Date.now() - stepStarted;
          if (syncHead !== undefined) await followHead(syncHead);
          syncHead = undefined;
          if (state.mode === 'depth') {
            state.shallowStarted = true;
            state.step = Math.ceil(state.step * plan.growth);
          }
          state.done = state.mode !== 'depth' || !(await isShallow(repo, home));
          if (state.done) {
            state.percent = 100;
            await markCheckedOnArrival(repo, state.checkedOnArrival === true);
            await keepPacksFew(repo, { home, timeoutMs: 600_000 });
            // Every later walk of raw.git (the list below, authors, scans, a sync's next list)
            // reads commits from a commit-graph instead of parsing each; a sync adds a layer of
            // its new commits only (`--split`).
            await local(repo, home, ['commit-graph', 'write', '--reachable', '--split', '--no-progress']);
            // raw.git has branches and tags only: the list of their commits is the count too.
            state.commitCount = await saveGitRevisions(repo, home);
          } else {
            state.commitCount = await countCommits(repo, home);
            report(from + share);
          }
          await cursor.save(job.workDir, state);
          onProgress({ commitCount: state.commitCount, percent: state.percent });
        }
        return { done: state.done, commitCount: state.commitCount, percent: state.percent };
      } finally {
        await syncHead?.catch(() => undefined); // not left running against a closed session
        await session.close();
      }
    },

    async authors(job, seen) {
      const repo = rawRepositoryPath(job.workDir);
      const home = join(job.workDir, 'home');
      await prepareGitHome(home, [repo]);
      return gitAuthors(repo, home, seen);
    },

    reopen: (workDir) => reopenGitHistory(workDir, plan),
  };
}

export function checkedUrl(access: OriginAccess): URL {
  const check = checkOriginUrl(access.url, 'git', access.allowedAddresses);
  if (check.ok) return check.url;
  if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(access.url).hostname);
  throw new OriginFailed(check.message);
}

/* ------------------------------------------------------------------------------------------------
 * Detection
 * ---------------------------------------------------------------------------------------------- */

const basicAuth = (access: OriginAccess): Record<string, string> =>
  access.credentials
    ? {
        authorization: `Basic ${Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64')}`,
      }
    : {};

/**
 * One request answers both smart and dumb HTTP: a smart server answers `info/refs?service=…` with
 * the advertisement's content type; a dumb one serves the static `info/refs` file (the query is
 * ignored), confirmed by a `HEAD` file. The URL is probed as given (no `.git` appended), because
 * the import fetches exactly that URL.
 */
async function detectHttp(
  url: URL,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<Detection> {
  const base = url.toString().replace(/\/+$/, '');
  const headers = { 'user-agent': USER_AGENT, ...basicAuth(access) };
  let refs: Awaited<ReturnType<typeof guardedRequest>>;
  try {
    refs = await guardedRequest(`${base}/info/refs?service=git-upload-pack`, guard, {
      headers,
      timeoutMs,
      maxBytes: 64 * 1024,
    });
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return { kind: 'nothing' }; // unreachable, timed out, not HTTP
  }
  if (refs.status === 401) return { kind: 'needs_auth' };
  if (refs.status !== 200) return { kind: 'nothing' };
  const type = String(refs.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type === SMART_TYPE)
    return looksLikeAdvertisement(refs.body) ? { kind: 'found', vcs: 'git' } : { kind: 'nothing' };
  if (!looksLikeDumbRefs(refs.body.toString('utf8'), refs.truncated)) return { kind: 'nothing' };
  try {
    const head = await guardedRequest(`${base}/HEAD`, guard, { headers, timeoutMs, maxBytes: 1024 });
    if (head.status === 401) return { kind: 'needs_auth' };
    const text = head.body.toString('utf8').trim();
    return head.status === 200 && /^(?:ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})$/.test(text)
      ? { kind: 'found', vcs: 'git' }
      : { kind: 'nothing' };
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return { kind: 'nothing' };
  }
}

/** `001e# service=git-upload-pack\n0000…` (protocol v0/v1), or `000eversion 2\n` (v2 may skip the header). */
const looksLikeAdvertisement = (body: Buffer): boolean =>
  /^[0-9a-f]{4}(?:# service=git-upload-pack|version 2)\n/.test(body.subarray(0, 64).toString('latin1'));

/** Lines of `<object id>\t<ref>`; an empty file is an empty repository. */
function looksLikeDumbRefs(text: string, truncated: boolean): boolean {
  const lines = text.split('\n');
  if (truncated) lines.pop();
  if (lines.at(-1) === '') lines.pop();
  return lines.every((line) => /^(?:[0-9a-f]{40}|[0-9a-f]{64})\trefs\/\S+$/.test(line));
}

async function detectGitProtocol(
  access: OriginAccess,
  guard: Guard,
  idleTimeoutMs: number,
  timeoutMs = 30_000,
): Promise<Detection> {
  const scratch = await mkdtemp(join(tmpdir(), 'git-detect-'));
  const home = join(scratch, 'home');
  try {
    await prepareGitHome(home, []);
    const session = await openSession(home, guard, access, idleTimeoutMs);
    try {
      await runGit([...session.args, 'ls-remote', '--heads', '--', access.url], {
        cwd: scratch,
        home,
        transport: 'network',
        timeoutMs,
        ...session.run,
        maxStdoutBytes: 64 * 1024 * 1024,
      });
      return { kind: 'found', vcs: 'git' };
    } catch (error) {
      if (session.proxy.refusals.some((refusal) => refusal.reason === 'forbidden'))
        throw classify(error, session, access);
      return { kind: 'nothing' };
    } finally {
      await session.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/* ------------------------------------------------------------------------------------------------
 * Guarded git calls
 * ---------------------------------------------------------------------------------------------- */

interface Session {
  readonly proxy: GuardProxy;
  /** `-c` options that send every transport through the guard proxy. */
  readonly args: readonly string[];
  /** What every call of the session runs with: the tunnel's proxy, the credentials' descriptor. */
  readonly run: Pick<GitRun, 'env' | 'secret'>;
  readonly home: string;
  /** The guard closes an origin connection quiet this long (refusal `idle`). */
  readonly idleTimeoutMs: number;
  /** To scrub from what git printed. */
  readonly password?: string | undefined;
  close(): Promise<void>;
}

export async function prepareGitHome(home: string, repositories: readonly string[]): Promise<void> {
  await prepareHome(home, repositories);
  await writeWholeIfChanged(join(home, 'git-tunnel.mjs'), GIT_TUNNEL_PROGRAM(process.execPath), 0o700);
}

/** The guard proxy for one job's git calls, and the options and environment that use it. */
export async function openSession(
  home: string,
  guard: Guard,
  access: OriginAccess,
  idleTimeoutMs: number,
): Promise<Session> {
  const proxy = await startGuardProxy(guard, { idleTimeoutMs });
  const credentials = access.credentials
    ? originCredentials(home, access.url, access.credentials)
    : undefined;
  return {
    proxy,
    home,
    idleTimeoutMs,
    password: access.credentials?.password,
    args: [
      '-c',
      `http.proxy=${proxy.url}`,
      '-c',
      `core.gitProxy=${join(home, 'git-tunnel.mjs')}`,
      ...(credentials?.args ?? []),
    ],
    run: {
      env: { IMPORT_GUARD_PROXY: `127.0.0.1:${proxy.port}` },
      ...(credentials ? { secret: credentials.secret } : {}),
    },
    close: () => proxy.close(),
  };
}

const local = (repo: string, home: string, args: readonly string[], maxStdoutBytes?: number) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000, maxStdoutBytes });

async function ensureBareRepository(repo: string, home: string): Promise<void> {
  // Not one to git (`isBareRepository`): none yet, or what a killed init left.
  if (!(await isBareRepository(repo))) {
    await rm(repo, { recursive: true, force: true });
    await runGit(['init', '--bare', '--quiet', '--', repo], {
      cwd: home,
      home,
      transport: 'local',
      timeoutMs: 30_000,
    });
  }
}

async function fetchStep(
  url: string,
  repo: string,
  session: Session,
  /** Null: the whole history, as `clone --bare` (every branch and tag, HEAD as the origin's). */
  depthArgs: readonly string[] | null,
  options: {
    timeoutMs: number;
    maxBytes: number;
    /** Most objects this fetch may bring. */
    maxObjects: number;
    onFraction: (fraction: number) => void;
    /** git checks every object it receives (`arrival-check.ts`). */
    check: boolean;
  },
): Promise<boolean> {
  const abort = new AbortController();
  let oversize = false;
  let tooMany = false;
  const watch = setInterval(() => {
    directorySize(repo).then(
      (size) => {
        if (size > options.maxBytes && !abort.signal.aborted) {
          oversize = true;
          abort.abort();
        }
      },
      () => undefined,
    );
  }, 1000);
  const trace = arrivalTracePath(session.home);
  await rm(trace, { force: true });
  const checks = options.check ? arrivalCheckArgs() : [];
  try {
    // `clone` skips the connectivity walk a `fetch` into an empty repository does (its index-pack
    // checks the pack is self-contained): measured 1.5x faster for a whole history.
    if (depthArgs === null) await rm(repo, { recursive: true, force: true });
    await runGit(
      depthArgs === null
        ? [
            ...session.args,
            ...checks,
            '-c',
            'gc.auto=0',
            'clone',
            '--bare',
            '--template=',
            '--progress',
            '--',
            url,
            repo,
          ]
        : [
            ...session.args,
            ...checks,
            '-c',
            'gc.auto=0',
            '-c',
            'fetch.writeCommitGraph=false',
            'fetch',
            '--no-tags',
            '--prune',
            '--progress',
            '--no-write-fetch-head',
            ...depthArgs,
            '--',
            url,
            ...REFSPECS,
          ],
      {
        cwd: depthArgs === null ? dirname(repo) : repo,
        home: session.home,
        transport: 'network',
        timeoutMs: options.timeoutMs,
        ...session.run,
        env: { ...session.run.env, ...(options.check ? { GIT_TRACE2_EVENT: trace } : {}) },
        signal: abort.signal,
        onProgress: (line) => {
          const fraction = progressFraction(line);
          if (fraction !== undefined) options.onFraction(fraction);
          // The pack's object count arrives with its first progress line, long before its data.
          const announced = objectsAnnounced(line);
          if (announced !== undefined && announced > options.maxObjects && !abort.signal.aborted) {
            tooMany = true;
            abort.abort();
          }
        },
      },
    );
    // The origin's URL is not kept in the repository's config (later steps push elsewhere).
    if (depthArgs === null) await local(repo, session.home, ['config', '--remove-section', 'remote.origin']);
    return options.check && (await checkedOnArrival(trace));
  } catch (error) {
    if (oversize) throw oversizeError(options.maxBytes);
    if (tooMany) throw tooManyObjectsError();
    throw error;
  } finally {
    clearInterval(watch);
    await rm(trace, { force: true });
  }
}

/** Git's `Receiving objects: NN%` is most of a fetch, `Resolving deltas: NN%` the rest. */
export function progressFraction(line: string): number | undefined {
  const match = /^(Receiving objects|Resolving deltas):\s+(\d{1,3})%/.exec(line.replace(/^remote:\s*/, ''));
  if (!match || line.startsWith('remote:')) return undefined;
  const value = Number(match[2]) / 100;
  return match[1] === 'Receiving objects' ? value * 0.9 : 0.9 + value * 0.1;
}

const isShallow = async (repo: string, home: string) =>
  (await local(repo, home, ['rev-parse', '--is-shallow-repository'])).toString().trim() === 'true';

/** The number of objects a fetch's pack holds, from git's `Receiving objects: NN% (a/b)`. */
export function objectsAnnounced(line: string): number | undefined {
  if (line.startsWith('remote:')) return undefined;
  const match = /^Receiving objects:\s+\d{1,3}% \(\d+\/(\d+)\)/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/**
 * A failed network call, as the user may read it: the guard's refusal first (it knows why), then
 * git's words mapped to a few plain cases; never a credential, the helper's path or the proxy.
 */
export function classify(
  error: unknown,
  session: Session,
  access: Pick<OriginAccess, 'url'> & { readonly workDir?: string },
): Error {
  const refusal = session.proxy.refusals.find((entry) => entry.reason === 'forbidden');
  if (refusal) return new ForbiddenAddress(refusal.address ?? refusal.host);
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  if (session.proxy.refusals.some((entry) => entry.reason === 'idle'))
    return new OriginFailed(
      `The origin ${hostOf(access.url)} sent nothing for ${session.idleTimeoutMs / 1000} seconds`,
    );
  if (!(error instanceof GitFailed))
    return new OriginFailed('Fetching from the origin failed unexpectedly; restart the import to try again');
  if (error.timedOut) return new OriginFailed('The origin timed out');
  const text = error.stderr;
  if (
    /Authentication failed|could not read (?:Username|Password)|returned error: 40[13]|HTTP 40[13]/i.test(
      text,
    )
  )
    return new OriginAuthFailed(
      session.password === undefined
        ? 'The origin requires a username and password'
        : 'The origin refused the username and password',
    );
  if (session.proxy.refusals.some((entry) => entry.reason === 'unreachable'))
    return new OriginFailed(`The origin ${hostOf(access.url)} could not be reached`);
  if (
    /returned error: 404|not found|does not appear to be a git repository|not valid: is this a git repository/i.test(
      text,
    )
  )
    return new OriginFailed(`No Git repository was found at ${access.url}`);
  if (/timed out/i.test(text)) return new OriginFailed('The origin timed out');
  if (/Could not resolve|Connection refused|Failed to connect|unable to connect|Connection reset/i.test(text))
    return new OriginFailed(`The origin ${hostOf(access.url)} could not be reached`);
  // The origin's own words (`remote: fatal: bad tree object …`) come before git's consequences.
  const words = gitWords(text, [session.home, session.proxy.url, access.workDir, session.password]);
  return new OriginFailed(
    `Fetching from the origin failed: ${words === '' ? `git exited with ${error.exitCode}` : words}`,
  );
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'host';
  }
};

/* ------------------------------------------------------------------------------------------------
 * Authors
 * ---------------------------------------------------------------------------------------------- */

/**
 * A job's raw.git and its git HOME, once raw.git exists; undefined before (an origin converted into
 * Git only after its history is fetched has no raw.git until then, and so no authors yet).
 */
export async function rawRepository(
  job: Pick<RawJob, 'workDir'>,
): Promise<{ repo: string; home: string } | undefined> {
  const repo = rawRepositoryPath(job.workDir);
  try {
    await stat(join(repo, 'HEAD'));
  } catch {
    return undefined;
  }
  const home = join(job.workDir, 'home');
  await prepareHome(home, [repo]);
  return { repo, home };
}
