/**
 * The paths a Mercurial conversion left out of the tree (`export-program.ts` lists them in
 * `hg-dropped.jsonl` beside the marks), as the report's `unstorable_paths` entries: the revision,
 * the changeset (40 hex), the path as Mercurial holds it, why (`#domain/unstorable-paths`, or
 * `beneath_file` / `file_and_folder` with the path it clashes with), each (changeset, path) once.
 */
import { readFile } from 'node:fs/promises';
import type { FindingEntry } from '#domain/import-report';
import { droppedFile } from './export.ts';

interface DroppedLine {
  readonly revision?: number;
  readonly changeset?: string;
  readonly path?: string;
  readonly reason?: string;
  readonly clash?: string | null;
  readonly deleted?: string;
}

export async function droppedPaths(gitRepo: string): Promise<FindingEntry[]> {
  let text: string;
  try {
    text = await readFile(droppedFile(gitRepo), 'utf8');
  } catch {
    return [];
  }
  const entries = new Map<string, FindingEntry>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const dropped = JSON.parse(line) as DroppedLine;
    if (dropped.path === undefined || dropped.changeset === undefined) continue;
    const key = `${dropped.changeset}\0${dropped.path}`;
    if (entries.has(key)) continue;
    entries.set(key, {
      revision: dropped.revision ?? null,
      changeset: dropped.changeset,
      path: dropped.path,
      reason: dropped.reason ?? null,
      clash: dropped.clash ?? null,
    });
  }
  return [...entries.values()].sort((a, b) => Number(a.revision) - Number(b.revision));
}
