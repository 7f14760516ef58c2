/**
 * Where each origin revision ends up. An adapter, once its raw history is done, writes
 * `raw.git/origin-revisions`: one `<origin revision> <raw commit>` line per converted revision, in
 * origin order (the raw repository moves between attempts whole, so the list travels with it).
 * The rewrite step maps raw commits to the commits it wrote (`RewriteResult.commitMap`), giving
 * the published map the push step stores.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RevisionEntry } from '#domain/revision-map';
import { runGit } from './git-command.ts';

const parsePairs = (text: string, separator: RegExp): [string, string][] =>
  text
    .split('\n')
    .map((line) => line.trim().split(separator))
    .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== '' && pair[1] !== '');

const originRevisionsFile = (rawDir: string) => join(rawDir, 'origin-revisions');

/** A map as a file: one `<origin revision> <commit>` line per entry, in origin order. */
export async function writeRevisionList(path: string, entries: readonly RevisionEntry[]): Promise<void> {
  await writeFile(path, entries.map((entry) => `${entry.originRevision} ${entry.commit}\n`).join(''));
}

/** The map a file holds; empty when there is no file. */
export async function readRevisionList(path: string): Promise<RevisionEntry[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return parsePairs(text, / /).map(([originRevision, commit]) => ({ originRevision, commit }));
}

/** The raw map of an adapter: origin revision → raw commit, in origin order. */
export const writeOriginRevisions = (rawDir: string, entries: readonly RevisionEntry[]): Promise<void> =>
  writeRevisionList(originRevisionsFile(rawDir), entries);

/** The raw map; empty when the adapter wrote none (a raw history from before the map existed). */
const readOriginRevisions = (rawDir: string): Promise<RevisionEntry[]> =>
  readRevisionList(originRevisionsFile(rawDir));

/** git fast-import's marks (`:<mark> <commit>`): mark → commit. */
export async function readMarks(file: string): Promise<Map<string, string>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return new Map(parsePairs(text, / /).map(([mark, commit]) => [mark.replace(/^:/, ''), commit]));
}

/**
 * Old → new commit ids from a rewrite's maps, applied in order: git filter-repo's `commit-map`
 * (`old new`, a header line, every commit) and git-lfs's `--object-map` (`old,new`, the commits
 * it changed). A commit a map does not list kept its id.
 */
export async function readCommitMaps(
  files: readonly { path: string; csv: boolean }[],
): Promise<Map<string, string>> {
  const composed = new Map<string, string>();
  for (const { path, csv } of files) {
    const step = new Map(
      parsePairs(await readFile(path, 'utf8'), csv ? /,/ : / +/).filter(([old]) =>
        /^[0-9a-f]{40,64}$/.test(old),
      ),
    );
    if (composed.size === 0) {
      for (const [old, now] of step) composed.set(old, now);
      continue;
    }
    for (const [raw, now] of composed) composed.set(raw, step.get(now) ?? now);
  }
  return composed;
}

/**
 * Writes the published map to `path`: each raw commit through the rewrite's map; with none (every
 * id kept) it is the raw map itself, copied unread.
 */
export async function writePublishedRevisions(
  rawDir: string,
  path: string,
  commitMap: ReadonlyMap<string, string> | null,
): Promise<void> {
  if (commitMap === null) {
    await copyFile(originRevisionsFile(rawDir), path).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await writeFile(path, '');
    });
    return;
  }
  const raw = await readOriginRevisions(rawDir);
  await writeRevisionList(
    path,
    raw.map((entry) => ({
      originRevision: entry.originRevision,
      commit: commitMap.get(entry.commit) ?? entry.commit,
    })),
  );
}

/**
 * A Git origin's raw map: its raw commits are the origin's own, listed parents first (`--topo-order
 * --reverse` over branches and tags: Git has no single order; this one never puts a commit before
 * its parents). Returns how many commits it listed: every commit of the branches and tags.
 */
export async function saveGitRevisions(rawDir: string, home: string): Promise<number> {
  const out = await runGit(['rev-list', '--reverse', '--topo-order', '--branches', '--tags'], {
    cwd: rawDir,
    home,
    transport: 'local',
    timeoutMs: 600_000,
    maxStdoutBytes: 512 * 1024 * 1024,
  });
  const ids = out
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
  await writeOriginRevisions(
    rawDir,
    ids.map((id) => ({ originRevision: id, commit: id })),
  );
  return ids.length;
}

/** A raw map from fast-import marks named by the origin's own numbers (TFVC changeset ids), ascending. */
export async function saveNumberedRevisions(rawDir: string, marksFile: string): Promise<void> {
  const marks = await readMarks(marksFile);
  const entries = [...marks.entries()]
    .filter(([mark]) => /^\d+$/.test(mark))
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([originRevision, commit]) => ({ originRevision, commit }));
  await writeOriginRevisions(rawDir, entries);
}
