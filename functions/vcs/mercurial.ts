/**
 * The Mercurial origin adapter: detects a repository (or an hgweb index of several) over HTTP(S),
 * pulls the whole history into `<workDir>/raw.hg` in bounded steps, then converts it once into
 * `<workDir>/raw.git` with git-remote-hg. Every later step works on `raw.git` as for Git.
 *
 * Refs in `raw.git`: the `default` branch is `main` (GitHub's default branch name), every other
 * named branch is `branches/<name>`, every bookmark a branch of its own name, every tag a tag;
 * git-remote-hg's notes and anything else are dropped.
 *
 * Network: Node's probes use `guardedRequest`; hg (Python, it cannot take our resolver) talks only
 * through the guard proxy (`http_proxy.host`, `http_proxy.always` so loopback is not bypassed).
 * Credentials reach hg only through a private config file (see `withHgConfig`).
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { checkOriginUrl } from '#domain/origin-url';
import { chunkCursor } from './chunk-cursor.ts';
import { gitAuthors } from './git.ts';
import { GitFailed, prepareHome, runGit } from './git-command.ts';
import { HgFailed, hgEnvironment, runHg, withHgConfig } from './hg-command.ts';
import { type Guard, type GuardProxy, guardedRequest, startGuardProxy } from './network-guard.ts';
import {
  type Detection,
  ForbiddenAddress,
  type OriginAccess,
  type OriginAdapter,
  OriginAuthFailed,
  type OriginAuthor,
  OriginFailed,
  type RawJob,
  rawRepositoryPath,
} from './origin.ts';

/**
 * How the pull is cut: with a large budget the whole history in one pull; otherwise `hg pull -r N`
 * (revision N of the origin and its ancestors) for N = firstRevs−1, then growing by `growth`,
 * until the origin has no revision N; then one pull of everything left.
 */
export interface HgChunkPlan {
  readonly fullPullMinBudgetMs: number;
  readonly firstRevs: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
}

export const DEFAULT_HG_CHUNK_PLAN: HgChunkPlan = {
  fullPullMinBudgetMs: 120_000,
  firstRevs: 5000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

export interface MercurialAdapterOptions {
  readonly resolve?: Guard['resolve'];
  readonly dial?: Guard['dial'];
  readonly hgPlan?: Partial<HgChunkPlan>;
  readonly probeTimeoutMs?: number;
}

interface HgState {
  readonly version: 1;
  mode: 'full' | 'steps';
  /** Revisions the next `pull -r` asks for (its target is `revs - 1`). */
  revs: number;
  /** A `pull -r` step succeeded: a later whole pull is the rest of the history, not all of it. */
  stepped: boolean;
  /** Everything is in raw.hg. */
  pulled: boolean;
  percent: number;
  commitCount: number | null;
  done: boolean;
}

const HG_TYPE = 'application/mercurial-0.1';
const USER_AGENT = 'mercurial/proto-1.0 (Mercurial 6.3.2; source-import)';

export const rawHgPath = (workDir: string): string => join(workDir, 'raw.hg');

export function mercurialAdapter(options: MercurialAdapterOptions = {}): OriginAdapter {
  const plan: HgChunkPlan = { ...DEFAULT_HG_CHUNK_PLAN, ...options.hgPlan };
  const guardFor = (access: OriginAccess): Guard => ({
    allowedAddresses: access.allowedAddresses,
    resolve: options.resolve,
    dial: options.dial,
  });

  return {
    vcs: 'mercurial',

    detect: async (access) =>
      detectHttp(checkedUrl(access.url, access), access, guardFor(access), options.probeTimeoutMs),

    async importRawChunk(job, budgetMs, onProgress) {
      const started = Date.now();
      const url = originUrl(job);
      const home = join(job.workDir, 'home');
      const hgRepo = rawHgPath(job.workDir);
      const cursor = hgCursor(budgetMs >= plan.fullPullMinBudgetMs ? 'full' : 'steps', plan);
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareHome(home);
      await ensureHgRepository(hgRepo, home);
      const proxy = await startGuardProxy(guardFor(job));
      const auth = job.credentials ? { url, ...job.credentials } : undefined;
      const proxyConfig = `[http_proxy]\nhost = 127.0.0.1:${proxy.port}\nalways = true\n`;
      try {
        let steps = 0;
        let lastStepMs = 0;
        while (!state.pulled) {
          const remaining = started + budgetMs - Date.now();
          if (steps > 0 && (remaining <= 0 || lastStepMs * plan.growth > remaining)) break;
          const from = state.percent;
          const share = state.mode === 'steps' ? (90 - from) / 2 : 90 - from;
          const stepStarted = Date.now();
          // An interrupted pull leaves a journal that blocks the next one; recover is a no-op otherwise.
          await runHg(['recover', '-R', hgRepo], { cwd: home, home, timeoutMs: 600_000 }).catch(
            () => undefined,
          );
          try {
            await withHgConfig(home, proxyConfig, auth, (hgrc) =>
              runHg(
                [
                  'pull',
                  '-R',
                  hgRepo,
                  ...(state.mode === 'steps' ? ['-r', String(state.revs - 1)] : []),
                  '--',
                  url,
                ],
                {
                  cwd: home,
                  home,
                  hgrc,
                  timeoutMs:
                    state.mode === 'full' && !state.stepped
                      ? Math.max(remaining, 1)
                      : Math.max(remaining, plan.minStepTimeoutMs),
                },
              ),
            );
            steps += 1;
            if (state.mode === 'full') state.pulled = true;
            else {
              state.stepped = true;
              state.revs = Math.ceil(state.revs * plan.growth);
            }
          } catch (error) {
            if (
              error instanceof HgFailed &&
              state.mode === 'steps' &&
              /unknown revision/i.test(error.stderr)
            ) {
              // The origin has fewer revisions than asked for: the rest is pulled whole.
              state.mode = 'full';
              await cursor.save(job.workDir, state);
              continue;
            }
            if (!(error instanceof HgFailed && error.timedOut)) throw classify(error, proxy, job, url);
            // The transfer is lost (a killed pull rolls back): pull fewer revisions per step from now on.
            if (state.mode === 'full') {
              state.mode = 'steps';
              if (state.stepped) state.revs = Math.max(1, Math.floor(state.revs * 0.75));
            } else if (state.revs > 1) state.revs = Math.max(1, Math.floor(state.revs / 2));
            else throw new OriginFailed('The origin did not send the history in time');
            await cursor.save(job.workDir, state);
            return { done: false, commitCount: state.commitCount, percent: state.percent };
          }
          lastStepMs = Date.now() - stepStarted;
          state.commitCount = await countHgRevisions(hgRepo, home);
          state.percent = Math.max(state.percent, Math.min(90, Math.floor(from + share)));
          await cursor.save(job.workDir, state);
          onProgress({ commitCount: state.commitCount, percent: state.percent });
        }
        if (!state.pulled) return { done: false, commitCount: state.commitCount, percent: state.percent };
        await convert(hgRepo, rawRepositoryPath(job.workDir), home);
        state.commitCount = await countGitCommits(rawRepositoryPath(job.workDir), home);
        state.done = true;
        state.percent = 100;
        await cursor.save(job.workDir, state);
        return { done: true, commitCount: state.commitCount, percent: 100 };
      } finally {
        await proxy.close();
      }
    },

    async authors(job) {
      const home = join(job.workDir, 'home');
      await prepareHome(home);
      const repo = rawRepositoryPath(job.workDir);
      try {
        await stat(join(repo, 'HEAD'));
      } catch {
        return []; // converted only once the whole history is pulled
      }
      return mercurialAuthors(repo, rawHgPath(job.workDir), home, originUrl(job));
    },
  };
}

function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'mercurial', access.allowedAddresses);
  if (check.ok) return check.url;
  if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
  throw new OriginFailed(check.message);
}

/** The repository to pull: the URL itself, or the chosen repository of an hgweb index. */
function originUrl(job: RawJob): string {
  const base = checkedUrl(job.url, job);
  if (!job.choice?.path) return base.toString();
  const root = base.toString().endsWith('/') ? base : new URL(`${base.toString()}/`);
  return checkedUrl(new URL(job.choice.path.replace(/^\/+/, ''), root).toString(), job).toString();
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

const contentType = (headers: Record<string, unknown>) =>
  String(headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();

/**
 * `?cmd=capabilities` answers with hg's wire protocol type from a repository; an hgweb index
 * (hgweb.config with several repositories) answers its HTML page there, and lists its
 * repositories one path a line at `?style=raw` (a single repository refuses that style).
 */
async function detectHttp(
  url: URL,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<Detection> {
  const base = url.toString().replace(/\?.*$/, '');
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(access) };
  const probe = async (query: string) => {
    try {
      return await guardedRequest(`${base}${query}`, guard, { headers, timeoutMs, maxBytes: 64 * 1024 });
    } catch (error) {
      if (error instanceof ForbiddenAddress) throw error;
      return undefined;
    }
  };
  const caps = await probe('?cmd=capabilities');
  if (!caps) return { kind: 'nothing' };
  if (caps.status === 401) return { kind: 'needs_auth' };
  if (caps.status === 200 && contentType(caps.headers) === HG_TYPE)
    return /(?:^|\s)(?:lookup|getbundle)(?:\s|$)/.test(caps.body.toString('latin1'))
      ? { kind: 'found', vcs: 'mercurial' }
      : { kind: 'nothing' };
  if (caps.status !== 200 || contentType(caps.headers) !== 'text/html') return { kind: 'nothing' };
  const index = await probe(base.endsWith('/') ? '?style=raw' : '/?style=raw');
  if (index?.status !== 200 || contentType(index.headers) !== 'text/plain' || index.truncated)
    return { kind: 'nothing' };
  const lines = index.body
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0 || !lines.every((line) => /^\/[^\s?#]*\/$/.test(line))) return { kind: 'nothing' };
  const prefix = new URL(base.endsWith('/') ? base : `${base}/`).pathname;
  const choices = lines.map((line) => {
    const path = line.startsWith(prefix) ? line.slice(prefix.length) : line.replace(/^\//, '');
    return { vcs: 'mercurial' as const, humanName: path.replace(/\/$/, ''), path };
  });
  return { kind: 'multiple', choices };
}

/* ------------------------------------------------------------------------------------------------
 * Local steps
 * ---------------------------------------------------------------------------------------------- */

async function ensureHgRepository(repo: string, home: string): Promise<void> {
  try {
    await stat(join(repo, '.hg', 'requires'));
  } catch {
    await rm(repo, { recursive: true, force: true });
    await mkdir(repo, { recursive: true });
    await runHg(['init', '--', repo], { cwd: home, home, timeoutMs: 30_000 });
  }
}

const countHgRevisions = async (repo: string, home: string) =>
  (await runHg(['log', '-R', repo, '-r', 'all()', '-T', '.'], { cwd: home, home, timeoutMs: 600_000 }))
    .length;

const gitLocal = (repo: string, home: string, args: readonly string[]) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000 });

const countGitCommits = async (repo: string, home: string) => {
  const refs = (await gitLocal(repo, home, ['for-each-ref', '--count=1', '--format=%(refname)']))
    .toString()
    .trim();
  if (refs === '') return 0;
  return Number((await gitLocal(repo, home, ['rev-list', '--all', '--count'])).toString().trim());
};

/**
 * raw.hg → raw.git with git-remote-hg (a local conversion, no network), then the refs as GitHub's
 * users expect them (see the module comment). git-remote-hg names the tip of `default` `master`
 * and also `branches/default`; `master` becomes `main` unless a bookmark already holds `main`.
 */
async function convert(hgRepo: string, gitRepo: string, home: string): Promise<void> {
  await rm(gitRepo, { recursive: true, force: true });
  await runGit(
    ['-c', 'protocol.hg.allow=always', 'clone', '--mirror', '--quiet', '--', `hg::${hgRepo}`, gitRepo],
    {
      cwd: home,
      home,
      transport: 'local',
      timeoutMs: 3_600_000,
      env: { ...hgEnvironment(home), GIT_ALLOW_PROTOCOL: 'hg' },
    },
  );
  await gitLocal(gitRepo, home, ['config', '--remove-section', 'remote.origin']).catch(() => undefined);
  await rm(join(gitRepo, 'hg'), { recursive: true, force: true }); // git-remote-hg's marks
  const refs = new Map(
    (await gitLocal(gitRepo, home, ['for-each-ref', '--format=%(refname) %(objectname)']))
      .toString()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(' ') as [string, string]),
  );
  const commands: string[] = [];
  for (const name of refs.keys())
    if (!name.startsWith('refs/heads/') && !name.startsWith('refs/tags/')) commands.push(`delete ${name}`);
  const master = refs.get('refs/heads/master');
  if (master !== undefined && !refs.has('refs/heads/main')) {
    commands.push(`create refs/heads/main ${master}`, `delete refs/heads/master`);
    if (refs.get('refs/heads/branches/default') === master)
      commands.push('delete refs/heads/branches/default');
  }
  if (commands.length > 0) {
    await runGit(['update-ref', '--stdin'], {
      cwd: gitRepo,
      home,
      transport: 'local',
      timeoutMs: 600_000,
      input: `${commands.join('\n')}\n`,
    });
  }
  const head = refs.has('refs/heads/main') || master !== undefined ? 'main' : 'master';
  await gitLocal(gitRepo, home, ['symbolic-ref', 'HEAD', `refs/heads/${head}`]);
}

/* ------------------------------------------------------------------------------------------------
 * Authors
 * ---------------------------------------------------------------------------------------------- */

/**
 * The Git identities in raw.git are what the rewrite step looks up, so they are the remote ids;
 * `remoteName` is the Mercurial user string they came from. git-remote-hg writes a user without
 * `<email>` as `name <unknown>`: such an author gets a made-up valid email `<name>@<origin host>`.
 */
async function mercurialAuthors(
  gitRepo: string,
  hgRepo: string,
  home: string,
  url: string,
): Promise<readonly OriginAuthor[]> {
  const users = (
    await runHg(['log', '-R', hgRepo, '-r', 'all()', '-T', '{user}\\0'], {
      cwd: home,
      home,
      timeoutMs: 600_000,
    })
  )
    .toString('utf8')
    .split('\0')
    .filter((user) => user !== '');
  const byIdentity = new Map<string, string>();
  for (const user of users) {
    const match = /^(.*?)\s*<([^>]*)>\s*$/.exec(user);
    const identity = match ? `${match[1]?.trim() ?? ''} <${match[2]}>` : `${user.trim()} <unknown>`;
    if (!byIdentity.has(identity)) byIdentity.set(identity, user);
  }
  const host = new URL(url).hostname;
  const domain = /[a-z]/i.test(host) && !host.includes(':') ? host : 'mercurial.invalid';
  return (await gitAuthors(gitRepo, home)).map((author) => {
    const synthetic = !/^[^\s<>@]+@[^\s<>@]+$/.test(author.email);
    const local =
      author.name
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, '-')
        .replace(/^-+|-+$/g, '') || 'user';
    return {
      remoteId: author.remoteId,
      remoteName: byIdentity.get(author.remoteId) ?? author.name,
      name: author.name,
      email: synthetic ? `${local}@${domain}` : author.email,
    };
  });
}

/* ------------------------------------------------------------------------------------------------
 * Errors and state
 * ---------------------------------------------------------------------------------------------- */

function classify(error: unknown, proxy: GuardProxy, job: RawJob, url: string): Error {
  const refusal = proxy.refusals.find((entry) => entry.reason === 'forbidden');
  if (refusal) return new ForbiddenAddress(refusal.address ?? refusal.host);
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  if (error instanceof GitFailed) return new OriginFailed('Converting the Mercurial history failed');
  if (!(error instanceof HgFailed)) return new OriginFailed('The import failed unexpectedly');
  if (error.timedOut) return new OriginFailed('The origin timed out');
  const text = error.stderr;
  if (/authorization (?:failed|required)/i.test(text))
    return new OriginAuthFailed(
      job.credentials === undefined
        ? 'The origin requires a username and password'
        : 'The origin refused the username and password',
    );
  const host = new URL(url).host;
  if (
    proxy.refusals.some((entry) => entry.reason === 'unreachable') ||
    /error: \[Errno|Connection refused/i.test(text)
  )
    return new OriginFailed(`The origin ${host} could not be reached`);
  if (/HTTP Error 404|does not appear to be an hg repository|not found/i.test(text))
    return new OriginFailed(`No Mercurial repository was found at ${url}`);
  let line =
    text
      .split('\n')
      .map((entry) => entry.trim())
      .filter((entry) => entry.startsWith('abort:'))
      .at(-1) ?? 'hg failed';
  if (job.credentials) line = line.split(job.credentials.password).join('***');
  return new OriginFailed(`Pulling from the origin failed: ${line.slice(0, 300)}`);
}

/** The cursor of the Mercurial raw step; a first chunk starts from `mode` with the plan's first step. */
const hgCursor = (mode: HgState['mode'], plan: HgChunkPlan) =>
  chunkCursor<HgState>('raw-hg-state.json', () => ({
    version: 1,
    mode,
    revs: plan.firstRevs,
    stepped: false,
    pulled: false,
    percent: 0,
    commitCount: null,
    done: false,
  }));
