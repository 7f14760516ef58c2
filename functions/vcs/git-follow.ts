/**
 * Following a Git origin (issue 27): a sync keeps the raw history of the attempt before and
 * fetches only what the origin gained into it.
 *
 * `reopenGitHistory` turns a finished raw step's cursor into a `sync` one; the next
 * `importRawChunk` (`git.ts`) then runs one plain `git fetch --prune` of every branch and tag
 * (forced updates allowed: `+refs/heads/*:refs/heads/*`, `+refs/tags/*:refs/tags/*`) into the
 * existing `raw.git`, through the same session, network guard, limits, inactivity deadline and
 * arrival checks (`fetch.fsckObjects`) as an import's fetch, takes HEAD from the origin's HEAD,
 * and rewrites `raw.git/origin-revisions`. git negotiates with the commits raw.git has, so only
 * the objects it lacks travel. Refs the origin deleted are pruned and moved refs follow the
 * origin, so the result is the raw history a fresh import would fetch, id for id (Git's raw ids
 * are the origin's). Objects no ref reaches any more stay in raw.git, unpublished.
 *
 * A raw history that is not reusable (the attempt before failed while fetching a fresh import, or
 * its cursor or repository is missing) is started afresh, which is always correct.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChunkPlan, gitCursor, RAW_STATE_FILE, type RawState } from './git-raw-state.ts';
import { rawRepositoryPath, startAfresh } from './origin.ts';

export async function reopenGitHistory(workDir: string, plan: ChunkPlan): Promise<void> {
  const state = await savedState(workDir);
  const reusable =
    state !== undefined &&
    (state.done || state.mode === 'sync') &&
    (await exists(join(rawRepositoryPath(workDir), 'HEAD'))) &&
    !(await exists(join(rawRepositoryPath(workDir), 'shallow')));
  if (!reusable) return startAfresh(workDir);
  // Asked again on every sync: the origin's HEAD may have moved (`defaultBranch` left out).
  const reopened: RawState = {
    version: 1,
    mode: 'sync',
    step: plan.firstDepth,
    shallowStarted: false,
    percent: 0,
    commitCount: state.commitCount,
    done: false,
    checkedOnArrival: state.checkedOnArrival === true,
  };
  await gitCursor('sync', plan).save(workDir, reopened);
}

async function savedState(workDir: string): Promise<RawState | undefined> {
  try {
    return JSON.parse(await readFile(join(workDir, RAW_STATE_FILE), 'utf8')) as RawState;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
