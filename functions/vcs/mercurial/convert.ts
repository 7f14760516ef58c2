/**
 * The conversion step: raw.hg into `<workDir>/raw.git` in bounded, resumable revision ranges
 * (`export.ts`) that shrink when one does not fit its time limit, then the refs (`refs.ts`).
 * `maxBytes` and `maxObjects` bound raw.git after each range.
 */

import { MAX_LISTED_FINDINGS } from '#domain/import-report';
import { countCommits, GitFailed } from '#vcs/git-command';
import { checkObjects, directorySize, oversizeError } from '#vcs/limits';
import { OriginFailed } from '#vcs/origin';
import { emailDomain } from './authors.ts';
import { exportHgRevisions } from './export.ts';
import { saveHgFindings } from './findings.ts';
import { exportHgRefs } from './refs.ts';
import { type HgChunk, PULL_SHARE } from './state.ts';
import { CONVERSION_FAILED, conversionWords } from './words.ts';

export interface ConvertLimits {
  readonly maxBytes: number;
  readonly maxObjects: number;
}

/** Converts as many ranges as this chunk's time allows; true when every pulled revision is in raw.git. */
export async function convertHistory(chunk: HgChunk, limits: ConvertLimits): Promise<boolean> {
  const { url, home, hgRepo, gitRepo, plan, budgetMs, started, state } = chunk;
  const pulled = state.pulledRevs ?? 0;
  while ((state.converted ?? 0) < pulled) {
    const remaining = started + budgetMs - Date.now();
    if (chunk.outOfTime(remaining)) return false;
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
            chunk.report(PULL_SHARE + ((99 - PULL_SHARE) * (from + count)) / pulled, pulled);
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
      await chunk.save();
      return false;
    }
    chunk.steps += 1;
    chunk.lastStepMs = Date.now() - stepStarted;
    state.converted = to;
    // Ranges that fit grow again (a slow stretch of history need not slow down the rest).
    if (state.convertBatch !== undefined) state.convertBatch = Math.ceil(state.convertBatch * plan.growth);
    if ((await directorySize(gitRepo)) > limits.maxBytes) throw oversizeError(limits.maxBytes);
    await checkObjects(gitRepo, limits.maxObjects);
    await chunk.save();
  }
  return true;
}

/**
 * Writes the refs and the job's findings (`findings.ts`), and keeps raw.hg's heads for a sync's
 * check (`origin-rewritten.ts`); returns the commit count of raw.git.
 */
export async function finishConversion(chunk: HgChunk): Promise<number> {
  const { job, url, home, hgRepo, gitRepo, plan, budgetMs } = chunk;
  try {
    const result = await exportHgRefs(
      {
        hgRepo,
        gitRepo,
        home,
        emailDomain: emailDomain(url),
        timeoutMs: Math.max(budgetMs, plan.minStepTimeoutMs),
      },
      MAX_LISTED_FINDINGS,
    );
    await saveHgFindings(job.workDir, gitRepo, result);
    chunk.state.heads = [...result.heads];
  } catch (error) {
    throw conversionFailed(error);
  }
  return countCommits(gitRepo, home);
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
