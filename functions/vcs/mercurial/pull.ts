/**
 * The pull: the origin's whole history into `<workDir>/raw.hg`, in one `hg pull` or in `pull -r N`
 * steps (`HgChunkPlan`), resumable across chunks. `maxBytes` bounds raw.hg (checked before and
 * after each step, and watched during it); `maxObjects` bounds the origin's revision count, since a
 * changeset is at least one commit object.
 *
 * Network: hg (Python, it cannot take our resolver) talks only through the guard proxy, and its
 * `importguard` extension (`import-guard.ts`) keeps it on the origin's scheme, host and port,
 * without clone bundles or stream clones, gives up on an origin that sends nothing for
 * `inactivityMs`, and takes the credentials on a file descriptor for that call only.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { directorySize, oversizeError, tooManyObjectsError } from '#vcs/limits';
import { type Guard, type GuardProxy, startGuardProxy } from '#vcs/network-guard';
import { ForbiddenAddress, OriginAuthFailed, OriginFailed, type RawJob } from '#vcs/origin';
import { HgFailed, runHg } from './command.ts';
import { guardFailure } from './import-guard.ts';
import { originRevisionCount } from './revision-count.ts';
import { type HgChunk, PULL_SHARE } from './state.ts';
import { hideLocalPaths } from './words.ts';

export interface PullLimits {
  readonly guard: Guard;
  readonly maxBytes: number;
  readonly maxObjects: number;
  readonly inactivityMs: number;
  readonly probeTimeoutMs?: number | undefined;
  readonly progressRefreshSeconds?: number | undefined;
}

/** Pulls as much as this chunk's time allows; `chunk.state.pulled` says whether all of it is in. */
export async function pullHistory(chunk: HgChunk, limits: PullLimits): Promise<void> {
  const { job, url, home, hgRepo, plan, budgetMs, started, state } = chunk;
  const { maxBytes, maxObjects, inactivityMs } = limits;
  const proxy = await startGuardProxy(limits.guard);
  const network = { origin: url, proxyPort: proxy.port, inactivityMs, credentials: job.credentials };
  try {
    if (state.total === undefined) {
      state.total = await originRevisionCount(url, job, limits.guard, limits.probeTimeoutMs);
      if (state.total !== null && state.total > maxObjects) throw tooManyObjectsError();
      await chunk.save();
    }
    const total = state.total;
    while (!state.pulled) {
      const remaining = started + budgetMs - Date.now();
      if (chunk.outOfTime(remaining)) break;
      if ((await directorySize(hgRepo)) > maxBytes) throw oversizeError(maxBytes);
      // A step that would ask for the origin's last revision or beyond is the whole pull.
      if (state.mode === 'steps' && total !== null && total !== undefined && state.revs >= total)
        state.mode = 'full';
      // Only the first whole pull of a large budget may be cut short (then it goes on in steps).
      const optimistic = state.mode === 'full' && !state.stepped && budgetMs >= plan.fullPullMinBudgetMs;
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
            progressRefreshSeconds: limits.progressRefreshSeconds,
            timeoutMs: optimistic ? Math.max(remaining, 1) : Math.max(remaining, plan.minStepTimeoutMs),
            // `changesets [==>   ] 47/1999`: what this pull has received of what it gets.
            onProgress: (line) => {
              const match = /^changesets\b.*?(\d+)\/(\d+)/.exec(line);
              if (!match) return;
              const received = had + Number(match[1]);
              const part = total
                ? (PULL_SHARE * Math.min(received, total)) / total
                : from + (share * Number(match[1])) / Math.max(1, Number(match[2]));
              chunk.report(part, received);
            },
          },
        );
        chunk.steps += 1;
        if (state.mode === 'full') state.pulled = true;
        else {
          state.stepped = true;
          state.revs = Math.ceil(state.revs * plan.growth);
        }
      } catch (error) {
        if (watch.oversize) throw oversizeError(maxBytes);
        if (error instanceof HgFailed && state.mode === 'steps' && /unknown revision/i.test(error.stderr)) {
          // The origin has fewer revisions than asked for: the rest is pulled whole.
          state.mode = 'full';
          await chunk.save();
          continue;
        }
        if (!(error instanceof HgFailed && error.timedOut))
          throw pullFailure(error, proxy, job, url, inactivityMs);
        // The transfer is lost (a killed pull rolls back): pull fewer revisions per step from now on.
        if (state.mode === 'full') {
          state.mode = 'steps';
          state.revs = Math.max(
            1,
            Math.floor(state.stepped ? state.revs * 0.75 : Math.min(state.revs, total ?? state.revs) / 2),
          );
        } else if (state.revs > 1) state.revs = Math.max(1, Math.floor(state.revs / 2));
        else throw new OriginFailed('The origin did not send the history in time');
        await chunk.save();
        return;
      } finally {
        watch.stop();
      }
      chunk.lastStepMs = Date.now() - stepStarted;
      if ((await directorySize(hgRepo)) > maxBytes) throw oversizeError(maxBytes);
      state.pulledRevs = await countHgRevisions(hgRepo, home);
      if (state.pulledRevs > maxObjects) throw tooManyObjectsError();
      chunk.report(
        state.pulled ? PULL_SHARE : total ? (PULL_SHARE * state.pulledRevs) / total : from + share,
        state.pulledRevs,
      );
      await chunk.save();
    }
  } catch (error) {
    throw pullFailure(error, proxy, job, url, inactivityMs);
  } finally {
    await proxy.close();
  }
}

/** raw.hg as an empty repository, unless one is there. */
export async function ensureHgRepository(repo: string, home: string): Promise<void> {
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

/**
 * A failed pull (or any hg call to the origin) as the user reads it: the origin's own words,
 * without credentials or our paths.
 */
export function pullFailure(
  error: unknown,
  proxy: GuardProxy,
  job: RawJob,
  url: string,
  inactivityMs: number,
): Error {
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
  const lines = text.split('\n').map((entry) => entry.trim());
  const abort = lines.findLastIndex((entry) => entry.startsWith('abort:'));
  let line = abort < 0 ? 'hg failed' : (lines[abort] ?? 'hg failed');
  // `abort: remote error:` is followed by the origin's own words (e.g. that it needs largefiles).
  if (line.endsWith('remote error:'))
    line = [line, ...lines.slice(abort + 1).filter((entry) => entry !== '')].join(' ');
  if (job.credentials) line = line.split(job.credentials.password).join('***');
  // hg may name a file of ours (`raw.hg`, HOME): the user gets the origin's problem, not our disk.
  line = hideLocalPaths(line);
  return new OriginFailed(`Pulling from the origin failed: ${line.slice(0, 300)}`);
}
