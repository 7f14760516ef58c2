/**
 * The Mercurial origin adapter: detects a repository (or an hgweb index of several) over HTTP(S),
 * asks the origin how many revisions it has (for progress and the object limit), pulls the whole
 * history into `<workDir>/raw.hg` in bounded steps, then converts it into `<workDir>/raw.git` in
 * bounded, resumable ranges (`hg-export.ts`, which also says how refs are named; the renames go to
 * `renamed-refs.json`, see `renamed-refs.ts`). Every later step works on `raw.git` as for Git.
 *
 * Limits: `maxBytes` bounds raw.hg (checked before and after each pull step, and watched during
 * it) and raw.git (after each conversion range); `maxObjects` bounds raw.git's objects (after each
 * range) and, since a changeset is at least one commit object, the origin's revision count.
 *
 * Network: Node's probes use `guardedRequest` (the revision-count probe follows no redirect); hg
 * (Python, it cannot take our resolver) talks only through the guard proxy, and its `importguard`
 * extension (`hg-import-guard.ts`) keeps it on the origin's scheme, host and port, without clone
 * bundles or stream clones, gives up on an origin that sends nothing for `idleTimeoutMs`, and
 * takes the credentials on a file descriptor for that call only.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gitRemoteId } from '#domain/imports';
import { checkOriginUrl } from '#domain/origin-url';
import { type AdapterOptions, adapterSetup } from './adapter-options.ts';
import { chunkCursor } from './chunk-cursor.ts';
import { saveRenamedRefs } from './findings.ts';
import { gitAuthors } from './git.ts';
import { GitFailed, prepareHome, runGit } from './git-command.ts';
import { HgFailed, runHg } from './hg-command.ts';
import {
  CONVERSION_FAILED,
  conversionWords,
  exportHgRefs,
  exportHgRevisions,
  hideLocalPaths,
} from './hg-export.ts';
import { guardFailure } from './hg-import-guard.ts';
import { checkObjects, directorySize, oversizeError, tooManyObjectsError } from './limits.ts';
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
 * until the origin has no revision N; then one pull of everything left. The conversion to Git runs
 * after the whole pull, in ranges of revisions that shrink when one does not fit its time limit.
 */
export interface HgChunkPlan {
  readonly fullPullMinBudgetMs: number;
  readonly firstRevs: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
  /** Most revisions the first conversion run takes (default: all; a run that times out shrinks it). */
  readonly convertRevs?: number;
  /** A conversion run's time limit (default: what is left of the budget, at least `minStepTimeoutMs`). */
  readonly convertTimeoutMs?: number;
}

export const DEFAULT_HG_CHUNK_PLAN: HgChunkPlan = {
  fullPullMinBudgetMs: 120_000,
  firstRevs: 5000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

export interface MercurialAdapterOptions extends AdapterOptions {
  readonly hgPlan?: Partial<HgChunkPlan>;
  readonly probeTimeoutMs?: number;
  /** hg's progress bar refresh (default 0.1 s), which paces the pull's progress reports. */
  readonly progressRefreshSeconds?: number;
  // `maxBytes` bounds `raw.hg` and `raw.git`; `maxObjects` is checked after each conversion range,
  // and a changeset becomes at least one Git object, so more revisions than that fail early.
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
  /** The origin's revision count, asked before the first pull; null when it would not say. */
  total?: number | null;
  /** Revisions in raw.hg (after the last pull step). */
  pulledRevs?: number;
  /** Revisions 0 … converted−1 are in raw.git. */
  converted?: number;
  /** Most revisions one conversion run takes; absent: all that are left. */
  convertBatch?: number;
  percent: number;
  commitCount: number | null;
  done: boolean;
}

const HG_TYPE = 'application/mercurial-0.1';
const USER_AGENT = 'mercurial/proto-1.0 (Mercurial 6.3.2; source-import)';
/** Percent of the raw step the pull takes; the conversion takes the rest up to 99. */
const PULL_SHARE = 50;

export const rawHgPath = (workDir: string): string => join(workDir, 'raw.hg');

export function mercurialAdapter(options: MercurialAdapterOptions = {}): OriginAdapter {
  const plan: HgChunkPlan = { ...DEFAULT_HG_CHUNK_PLAN, ...options.hgPlan };
  const { maxBytes, maxObjects, guardFor, idleTimeoutMs: inactivityMs } = adapterSetup(options);

  return {
    vcs: 'mercurial',

    detect: async (access) =>
      detectHttp(checkedUrl(access.url, access), access, guardFor(access), options.probeTimeoutMs),

    async importRawChunk(job, budgetMs, onProgress) {
      const started = Date.now();
      const url = originUrl(job);
      const home = join(job.workDir, 'home');
      const hgRepo = rawHgPath(job.workDir);
      const gitRepo = rawRepositoryPath(job.workDir);
      const cursor = hgCursor(budgetMs >= plan.fullPullMinBudgetMs ? 'full' : 'steps', plan);
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareHome(home);
      await ensureHgRepository(hgRepo, home);
      const report = (percent: number, commitCount: number | null) => {
        const rounded = Math.min(99, Math.floor(percent));
        if (rounded < state.percent || (rounded === state.percent && commitCount === state.commitCount))
          return;
        state.percent = rounded;
        state.commitCount = commitCount;
        onProgress({ commitCount, percent: rounded });
      };
      const chunk = () => ({ done: false, commitCount: state.commitCount, percent: state.percent });
      let steps = 0;
      let lastStepMs = 0;
      const outOfTime = (remaining: number) =>
        steps > 0 && (remaining <= 0 || lastStepMs * plan.growth > remaining);

      if (!state.pulled) {
        const proxy = await startGuardProxy(guardFor(job));
        const network = { origin: url, proxyPort: proxy.port, inactivityMs, credentials: job.credentials };
        try {
          if (state.total === undefined) {
            state.total = await originRevisionCount(url, job, guardFor(job), options.probeTimeoutMs);
            if (state.total !== null && state.total > maxObjects) throw tooManyObjectsError();
            await cursor.save(job.workDir, state);
          }
          const total = state.total;
          while (!state.pulled) {
            const remaining = started + budgetMs - Date.now();
            if (outOfTime(remaining)) break;
            if ((await directorySize(hgRepo)) > maxBytes) throw oversizeError(maxBytes);
            // A step that would ask for the origin's last revision or beyond is the whole pull.
            if (state.mode === 'steps' && total !== null && total !== undefined && state.revs >= total)
              state.mode = 'full';
            // Only the first whole pull of a large budget may be cut short (then it goes on in steps).
            const optimistic =
              state.mode === 'full' && !state.stepped && budgetMs >= plan.fullPullMinBudgetMs;
            const from = state.percent;
            const had = state.pulledRevs ?? 0;
            const share = state.mode === 'steps' ? (PULL_SHARE - from) / 2 : PULL_SHARE - from;
            const stepStarted = Date.now();
            // An interrupted pull leaves a journal that blocks the next one.
            if (await exists(join(hgRepo, '.hg', 'store', 'journal')))
              await runHg(['recover', '-R', hgRepo], { cwd: home, home, timeoutMs: 600_000 }).catch(
                () => undefined,
              );
            const watch = sizeWatch(hgRepo, maxBytes);
            try {
              await runHg(
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
                  network,
                  signal: watch.signal,
                  progressRefreshSeconds: options.progressRefreshSeconds,
                  timeoutMs: optimistic ? Math.max(remaining, 1) : Math.max(remaining, plan.minStepTimeoutMs),
                  // `changesets [==>   ] 47/1999`: what this pull has received of what it gets.
                  onProgress: (line) => {
                    const match = /^changesets\b.*?(\d+)\/(\d+)/.exec(line);
                    if (!match) return;
                    const received = had + Number(match[1]);
                    const part = total
                      ? (PULL_SHARE * Math.min(received, total)) / total
                      : from + (share * Number(match[1])) / Math.max(1, Number(match[2]));
                    report(part, received);
                  },
                },
              );
              steps += 1;
              if (state.mode === 'full') state.pulled = true;
              else {
                state.stepped = true;
                state.revs = Math.ceil(state.revs * plan.growth);
              }
            } catch (error) {
              if (watch.oversize) throw oversizeError(maxBytes);
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
              if (!(error instanceof HgFailed && error.timedOut))
                throw classify(error, proxy, job, url, inactivityMs);
              // The transfer is lost (a killed pull rolls back): pull fewer revisions per step from now on.
              if (state.mode === 'full') {
                state.mode = 'steps';
                state.revs = Math.max(
                  1,
                  Math.floor(
                    state.stepped ? state.revs * 0.75 : Math.min(state.revs, total ?? state.revs) / 2,
                  ),
                );
              } else if (state.revs > 1) state.revs = Math.max(1, Math.floor(state.revs / 2));
              else throw new OriginFailed('The origin did not send the history in time');
              await cursor.save(job.workDir, state);
              return chunk();
            } finally {
              watch.stop();
            }
            lastStepMs = Date.now() - stepStarted;
            if ((await directorySize(hgRepo)) > maxBytes) throw oversizeError(maxBytes);
            state.pulledRevs = await countHgRevisions(hgRepo, home);
            if (state.pulledRevs > maxObjects) throw tooManyObjectsError();
            report(
              state.pulled ? PULL_SHARE : total ? (PULL_SHARE * state.pulledRevs) / total : from + share,
              state.pulledRevs,
            );
            await cursor.save(job.workDir, state);
          }
        } catch (error) {
          throw classify(error, proxy, job, url, inactivityMs);
        } finally {
          await proxy.close();
        }
        if (!state.pulled) return chunk();
      }

      const pulled = state.pulledRevs ?? 0;
      while ((state.converted ?? 0) < pulled) {
        const remaining = started + budgetMs - Date.now();
        if (outOfTime(remaining)) return chunk();
        const from = state.converted ?? 0;
        const to = Math.min(pulled, from + (state.convertBatch ?? plan.convertRevs ?? pulled));
        let done = 0;
        const stepStarted = Date.now();
        const timeoutMs = plan.convertTimeoutMs ?? Math.max(remaining, plan.minStepTimeoutMs);
        try {
          await exportHgRevisions(
            {
              hgRepo,
              gitRepo,
              home,
              emailDomain: emailDomain(url),
              timeoutMs,
              onConverted: (count) => {
                done = count;
                report(PULL_SHARE + ((99 - PULL_SHARE) * (from + count)) / pulled, pulled);
              },
            },
            from,
            to,
          );
        } catch (error) {
          if (!(error instanceof GitFailed && error.timedOut)) throw conversionFailed(error);
          // What fitted in the time, a little less, is the next range; a single revision that does not fit fails.
          if (to - from <= 1) throw conversionFailed(error);
          const half = Math.floor((to - from) / 2);
          state.convertBatch = Math.max(1, done > 0 ? Math.min(Math.floor(done * 0.75), half) : half);
          await cursor.save(job.workDir, state);
          return chunk();
        }
        steps += 1;
        lastStepMs = Date.now() - stepStarted;
        state.converted = to;
        // Ranges that fit grow again (a slow stretch of history need not slow down the rest).
        if (state.convertBatch !== undefined)
          state.convertBatch = Math.ceil(state.convertBatch * plan.growth);
        if ((await directorySize(gitRepo)) > maxBytes) throw oversizeError(maxBytes);
        await checkObjects(gitRepo, home, maxObjects);
        await cursor.save(job.workDir, state);
      }
      try {
        const renames = await exportHgRefs({
          hgRepo,
          gitRepo,
          home,
          emailDomain: emailDomain(url),
          timeoutMs: Math.max(budgetMs, plan.minStepTimeoutMs),
        });
        await saveRenamedRefs(job.workDir, renames);
      } catch (error) {
        throw conversionFailed(error);
      }
      state.commitCount = await countGitCommits(gitRepo, home);
      state.done = true;
      state.percent = 100;
      await cursor.save(job.workDir, state);
      return { done: true, commitCount: state.commitCount, percent: 100 };
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

/** Revisions in the (unfiltered) changelog: the revision numbers the conversion walks. */
const countHgRevisions = async (repo: string, home: string) =>
  Number(
    (
      await runHg(['log', '--hidden', '-R', repo, '-r', 'tip', '-T', '{rev}'], {
        cwd: home,
        home,
        timeoutMs: 600_000,
      })
    )
      .toString()
      .trim(),
  ) + 1;

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const gitLocal = (repo: string, home: string, args: readonly string[]) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000 });

const countGitCommits = async (repo: string, home: string) => {
  const refs = (await gitLocal(repo, home, ['for-each-ref', '--count=1', '--format=%(refname)']))
    .toString()
    .trim();
  if (refs === '') return 0;
  return Number((await gitLocal(repo, home, ['rev-list', '--all', '--count'])).toString().trim());
};

/* ------------------------------------------------------------------------------------------------
 * Authors
 * ---------------------------------------------------------------------------------------------- */

/**
 * The Git identities in raw.git are what the rewrite step looks up, so they are the remote ids;
 * `remoteName` is the Mercurial user string they came from. A user without `<email>` was already
 * given a made-up valid email by the conversion (`hgUserIdentity`, so nothing is rewritten for
 * it); an email that is still not valid (`Ada <ada>`) gets one here, and the rewrite applies it.
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
  const domain = emailDomain(url);
  const byIdentity = new Map<string, string>();
  for (const user of users) {
    const { name, email } = hgUserIdentity(user, domain);
    const identity = gitRemoteId(name, email);
    if (!byIdentity.has(identity)) byIdentity.set(identity, user);
  }
  return (await gitAuthors(gitRepo, home)).map((author) => ({
    remoteId: author.remoteId,
    remoteName: byIdentity.get(author.remoteId) ?? author.name,
    name: author.name,
    email: VALID_EMAIL.test(author.email) ? author.email : `${emailLocalPart(author.name)}@${domain}`,
  }));
}

const VALID_EMAIL = /^[^\s<>@]+@[^\s<>@]+$/;

/** The domain of made-up emails: the origin's host name, or `mercurial.invalid` for an address. */
export function emailDomain(url: string): string {
  const host = new URL(url).hostname;
  return /[a-z]/i.test(host) && !host.includes(':') && !host.startsWith('[') ? host : 'mercurial.invalid';
}

/** `Ada Lovelace` → `ada-lovelace` (ASCII letters lower-cased, every other run of characters one `-`). */
export const emailLocalPart = (name: string): string =>
  name
    .replace(/[A-Z]/g, (letter) => letter.toLowerCase())
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'user';

/**
 * The Git identity of a Mercurial user string, exactly as the conversion program writes it:
 * `Name <email>` keeps both (without `<`, `>` and line breaks); anything else is a name that gets
 * `<local part>@<domain>`.
 */
export function hgUserIdentity(user: string, domain: string): { name: string; email: string } {
  const clean = (text: string) => text.replace(/[<>\n]/g, '').trim();
  const match = /^(.*?)\s*<([^>]*)>\s*$/s.exec(user);
  if (match) return { name: clean(match[1] ?? ''), email: clean(match[2] ?? '') };
  const name = clean(user);
  return { name, email: `${emailLocalPart(name)}@${domain}` };
}

/**
 * The origin's revision count without pulling: wire-protocol `lookup`s of revision numbers (each
 * answers `1 <node>` or `0 unknown revision`), many in one `batch` request: first 0 and 2^k − 1,
 * then 63 points evenly inside the interval left, so 3 requests for 2,000 revisions and 5 for a
 * million. Null when the origin does not answer them (the pull still works; progress is then
 * counted in steps).
 */
async function originRevisionCount(
  url: string,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<number | null> {
  const base = url.replace(/\?.*$/, '');
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(access) };
  const known = async (revs: readonly number[]) => {
    const cmds = encodeURIComponent(revs.map((rev) => `lookup key=${rev}`).join(';'));
    // No redirect: one may lead off the origin, which hg will not follow either.
    const answer = await guardedRequest(`${base}?cmd=batch&cmds=${cmds}`, guard, {
      headers,
      timeoutMs,
      maxBytes: 64 * 1024,
      maxRedirects: 0,
    });
    const parts = answer.body.toString('latin1').split(';');
    if (
      answer.status !== 200 ||
      contentType(answer.headers) !== HG_TYPE ||
      parts.length !== revs.length ||
      !parts.every((part) => /^[01] /.test(part))
    )
      throw new Error('no batched lookup');
    return parts.map((part) => part.startsWith('1 '));
  };
  /** Known revisions are 0 … n−1: the last known and the first unknown of `points`. */
  const narrow = async (points: readonly number[], low: number, high: number) => {
    const answers = await known(points);
    const firstUnknown = answers.indexOf(false);
    const last = firstUnknown < 0 ? points.at(-1) : firstUnknown === 0 ? low : points[firstUnknown - 1];
    return { low: last ?? low, high: firstUnknown < 0 ? high : (points[firstUnknown] ?? high) };
  };
  try {
    const powers = [0, ...Array.from({ length: 32 }, (_, k) => 2 ** (k + 1) - 1)];
    let { low, high } = await narrow(powers, -1, Number.POSITIVE_INFINITY);
    if (low < 0) return 0;
    if (!Number.isFinite(high)) return null;
    while (high - low > 1) {
      const step = Math.ceil((high - low) / 64);
      const points: number[] = [];
      for (let rev = low + step; rev < high; rev += step) points.push(rev);
      ({ low, high } = await narrow(points, low, high));
    }
    return low + 1;
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return null;
  }
}

/** Aborts a pull when the directory it writes grows over `maxBytes` (checked every second). */
function sizeWatch(dir: string, maxBytes: number) {
  const abort = new AbortController();
  const watch = {
    signal: abort.signal,
    oversize: false,
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => {
    directorySize(dir).then(
      (size) => {
        if (size > maxBytes && !abort.signal.aborted) {
          watch.oversize = true;
          abort.abort();
        }
      },
      () => undefined,
    );
  }, 1000);
  return watch;
}

/** The step, and the conversion's own last words (without our paths); all of stderr goes to the logs. */
const conversionFailed = (error: unknown): Error =>
  error instanceof OriginFailed
    ? error
    : new OriginFailed(
        !(error instanceof GitFailed)
          ? CONVERSION_FAILED
          : error.timedOut
            ? 'Converting the Mercurial history to Git did not finish within the step time limit'
            : `${CONVERSION_FAILED}: ${conversionWords(error)}`,
        { cause: error },
      );

/* ------------------------------------------------------------------------------------------------
 * Errors and state
 * ---------------------------------------------------------------------------------------------- */

function classify(error: unknown, proxy: GuardProxy, job: RawJob, url: string, inactivityMs: number): Error {
  const refusal = proxy.refusals.find((entry) => entry.reason === 'forbidden');
  if (refusal) return new ForbiddenAddress(refusal.address ?? refusal.host);
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  if (!(error instanceof HgFailed)) return new OriginFailed('The import failed unexpectedly');
  if (error.timedOut) return new OriginFailed('The origin timed out');
  const text = error.stderr;
  const guarded = guardFailure(text, url, inactivityMs);
  if (guarded) return guarded;
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
  // hg may name a file of ours (`raw.hg`, HOME): the user gets the origin's problem, not our disk.
  line = hideLocalPaths(line);
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
