/**
 * The report's `unstorable_paths` of a TFVC import: each file a changeset wrote at a path Git
 * cannot store (`#domain/unstorable-paths`), which the replay leaves out (`changesets.ts`), as
 * `{changeset, path, reason}` with the server path exactly as the origin spells it. Kept in
 * `<workDir>/tfvc-unstorable.json` between chunks and written before the batch's fast-import, so a
 * chunk killed after its fast-import keeps them; a batch read again (a retried chunk) lists each
 * path and changeset once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FindingEntry } from '#domain/import-report';
import { saveFinding } from '#vcs/findings';
import { writeWhole } from '../whole-file.ts';
import type { Changeset } from './changesets.ts';

const UNSTORABLE_FILE = 'tfvc-unstorable.json';

interface Entry extends FindingEntry {
  readonly changeset: number;
  readonly path: string;
  readonly reason: string;
}

const keyOf = (entry: Entry) => `${entry.changeset}\0${entry.path}`;

async function load(workDir: string): Promise<Entry[]> {
  try {
    return JSON.parse(await readFile(join(workDir, UNSTORABLE_FILE), 'utf8')) as Entry[];
  } catch {
    return [];
  }
}

/** Adds the left-out paths of `changesets` to the job's list and its report. */
export async function recordUnstorable(
  workDir: string,
  changesets: readonly Pick<Changeset, 'id' | 'unstorable'>[],
): Promise<void> {
  const entries = await load(workDir);
  const known = new Set(entries.map(keyOf));
  for (const changeset of changesets)
    for (const write of changeset.unstorable) {
      const entry: Entry = { changeset: changeset.id, path: write.serverPath, reason: write.reason };
      if (known.has(keyOf(entry))) continue;
      known.add(keyOf(entry));
      entries.push(entry);
    }
  entries.sort((a, b) => a.changeset - b.changeset || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  await writeWhole(join(workDir, UNSTORABLE_FILE), JSON.stringify(entries));
  await saveFinding(workDir, 'unstorable_paths', entries);
}
