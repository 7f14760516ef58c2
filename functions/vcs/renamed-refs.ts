/**
 * `renamed-refs.json` in a job's work dir: every origin name that did not arrive under the ref it
 * asked for (`functions/domain/ref-names.ts`), as a JSON array of `{kind, name, ref, reason}`:
 * `kind` is what the origin calls it (`branch`, `bookmark`, `head`, `tag`), `name` its own
 * spelling, `ref` the full Git ref it arrived under, `reason` `invalid` (Git refuses the name) or
 * `clash` (another ref holds it or a folder of it). Written whole when the refs are written (an
 * empty array when nothing was renamed), so a restarted import rewrites it; the import report reads it.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RefRename } from '#domain/ref-names';

export const RENAMED_REFS_FILE = 'renamed-refs.json';

export async function saveRenamedRefs(workDir: string, renames: readonly RefRename[]): Promise<void> {
  const file = join(workDir, RENAMED_REFS_FILE);
  await writeFile(`${file}.new`, `${JSON.stringify(renames, null, 1)}\n`);
  await rename(`${file}.new`, file);
}

/** The renames of a job whose refs are written; empty before that. */
export async function loadRenamedRefs(workDir: string): Promise<RefRename[]> {
  try {
    return JSON.parse(await readFile(join(workDir, RENAMED_REFS_FILE), 'utf8')) as RefRename[];
  } catch {
    return [];
  }
}
