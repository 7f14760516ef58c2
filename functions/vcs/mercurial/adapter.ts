/**
 * The Mercurial origin adapter: detects a repository (or an hgweb index of several) over HTTP(S)
 * (`detect.ts`), asks the origin how many revisions it has (`revision-count.ts`, for progress and
 * the object limit), pulls the whole history into `<workDir>/raw.hg` in bounded steps (`pull.ts`),
 * then converts it into `<workDir>/raw.git` in bounded, resumable ranges (`convert.ts`, over
 * `export.ts`; `refs.ts` says how refs are named, and the renames go to the job's findings). Every
 * later step works on `raw.git` as for Git. Authors: `authors.ts`. A sync continues the attempt
 * before it and pulls and converts only what is new (`reopen.ts`).
 *
 * Network: Node's probes use `guardedRequest` (the revision-count probe follows no redirect); hg
 * goes only through the guard proxy and its `importguard` extension (`import-guard.ts`).
 */
import { join } from 'node:path';
import { type AdapterOptions, adapterSetup } from '#vcs/adapter-options';
import { rawRepository } from '#vcs/git';
import { prepareHome } from '#vcs/git-command';
import { type OriginAdapter, rawRepositoryPath } from '#vcs/origin';
import { mercurialAuthors } from './authors.ts';
import { convertHistory, finishConversion } from './convert.ts';
import { checkedUrl, detectHttp, originUrl } from './detect.ts';
import { ensureHgRepository, pullHistory } from './pull.ts';
import { beginSync, reopenHgHistory } from './reopen.ts';
import { DEFAULT_HG_CHUNK_PLAN, type HgChunkPlan, hgChunk, hgCursor, rawHgPath } from './state.ts';

export interface MercurialAdapterOptions extends AdapterOptions {
  readonly hgPlan?: Partial<HgChunkPlan>;
  readonly probeTimeoutMs?: number;
  /** hg's progress bar refresh (default 0.1 s), which paces the pull's progress reports. */
  readonly progressRefreshSeconds?: number;
  // `maxBytes` bounds `raw.hg` and `raw.git`; `maxObjects` is checked after each conversion range,
  // and a changeset becomes at least one Git object, so more revisions than that fail early.
}

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
      let state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareHome(home, [gitRepo]);
      await ensureHgRepository(hgRepo, home);
      if (state.reopened) {
        const check = { job, url, home, hgRepo, guard: guardFor(job), inactivityMs, heads: state.heads };
        const timeoutMs = options.probeTimeoutMs ?? plan.minStepTimeoutMs;
        const begun = await beginSync({ ...check, workDir: job.workDir, timeoutMs }, state, cursor);
        state = begun.state;
        if (begun.afresh) {
          await prepareHome(home, [gitRepo]);
          await ensureHgRepository(hgRepo, home);
        }
      }
      const chunk = hgChunk(
        { job, url, home, hgRepo, gitRepo, plan, budgetMs, started, state },
        cursor,
        onProgress,
      );
      const unfinished = () => ({ done: false, commitCount: state.commitCount, percent: state.percent });

      if (!state.pulled) {
        await pullHistory(chunk, {
          guard: guardFor(job),
          maxBytes,
          maxObjects,
          inactivityMs,
          probeTimeoutMs: options.probeTimeoutMs,
          progressRefreshSeconds: options.progressRefreshSeconds,
        });
        if (!state.pulled) return unfinished();
      }
      if (!(await convertHistory(chunk, { maxBytes, maxObjects }))) return unfinished();
      state.commitCount = await finishConversion(chunk);
      state.done = true;
      state.percent = 100;
      await chunk.save();
      return { done: true, commitCount: state.commitCount, percent: 100 };
    },

    async authors(job) {
      const raw = await rawRepository(job);
      if (!raw) return []; // converted only once the whole history is pulled
      return mercurialAuthors(raw.repo, rawHgPath(job.workDir), raw.home, originUrl(job));
    },

    reopen: (workDir) => reopenHgHistory(workDir, hgCursor('full', plan)),
  };
}
