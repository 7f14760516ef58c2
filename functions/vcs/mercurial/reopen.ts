/**
 * Following a Mercurial origin: a sync continues the attempt before it. What a continuation needs
 * is what a finished import leaves: raw.hg (the pulled changesets), raw.git with the conversion's
 * marks (`:<rev + 1>`, kept by `refs.ts`) and the cursor (`state.ts`). `reopenHgHistory` turns a
 * finished cursor back into one that pulls; the sync's first chunk (`beginSync`) then asks the
 * origin whether it still has every changeset raw.hg holds (`origin-rewritten.ts`). If it does, the pull brings only the
 * changesets not yet seen, the conversion exports only those (hg revision numbers of a repository
 * that is only pulled into never change, so the marks stay valid), and the refs and the revision
 * map are written again in full. If it does not (an `hg strip`, which `hg pull` never undoes), the
 * sync imports the whole origin afresh.
 *
 * Nothing kept names a path: the directory is renamed from one attempt to the next.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChunkCursor } from '#vcs/chunk-cursor';
import { rawRepositoryPath, startAfresh } from '#vcs/origin';
import { marksFile } from './export.ts';
import { originDropped, type RewriteCheck } from './origin-rewritten.ts';
import { type HgState, rawHgPath } from './state.ts';

/**
 * The adapter's `reopen`: keeps the directory when it holds a cursor, raw.hg and, once anything was
 * converted, the marks (an import finished before the marks were kept has none: it starts afresh).
 * Repeated safely: a reopened cursor is reopened to the same.
 */
export async function reopenHgHistory(workDir: string, cursor: ChunkCursor<HgState>): Promise<void> {
  const state = await cursor.load(workDir);
  const fresh = state.percent === 0 && state.pulledRevs === undefined && !state.done;
  const kept =
    !fresh &&
    (await exists(join(rawHgPath(workDir), '.hg', 'requires'))) &&
    ((state.converted ?? 0) === 0 || (await exists(marksFile(rawRepositoryPath(workDir)))));
  if (!kept) return startAfresh(workDir);
  if (state.done) {
    // One whole pull of what is new (cut into steps only if it does not fit a chunk).
    state.mode = 'full';
    state.stepped = false;
  } else {
    // raw.hg may hold changesets pulled after its heads were last listed: the origin is asked
    // about all of them (`hg outgoing`), not about the heads.
    delete state.heads;
  }
  state.done = false;
  state.pulled = false;
  state.reopened = true;
  // Asked again before the pull: the origin's count bounds the object limit and the progress.
  delete state.total;
  state.percent = 0;
  await cursor.save(workDir, state);
}

/**
 * The first chunk of a sync: when the origin lost changesets raw.hg holds, the directory is
 * emptied and the cursor starts over (the whole origin is imported, as a fresh import would);
 * otherwise raw.hg forgets its bookmarks, so the pull takes the origin's as they are (a pull keeps
 * a bookmark the origin deleted, and one the origin moved back). Returns the cursor to go on with.
 */
export async function beginSync(
  check: RewriteCheck & { readonly workDir: string },
  state: HgState,
  cursor: ChunkCursor<HgState>,
): Promise<{ readonly state: HgState; readonly afresh: boolean }> {
  if (await originDropped(check)) {
    await rm(check.workDir, { recursive: true, force: true });
    return { state: await cursor.load(check.workDir), afresh: true };
  }
  const store = join(check.hgRepo, '.hg');
  await rm(join(store, 'bookmarks'), { force: true });
  await rm(join(store, 'store', 'bookmarks'), { force: true });
  state.reopened = false;
  await cursor.save(check.workDir, state);
  return { state, afresh: false };
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
