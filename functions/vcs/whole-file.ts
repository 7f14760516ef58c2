/**
 * Files that a reader (another step, a retried chunk, a git or helper process running at the same
 * time) sees whole or not at all: written beside their place under a unique name, then renamed
 * over it. Renaming over a running program is safe too, where rewriting it in place fails
 * (`ETXTBSY`) or hands a reader half a file.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';

/** `writeWhole`, unless the file already holds exactly `data` (then nothing is replaced). */
export async function writeWholeIfChanged(file: string, data: string, mode?: number): Promise<void> {
  if ((await readFile(file, 'utf8').catch(() => undefined)) === data) return;
  await writeWhole(file, data, mode);
}

export async function writeWhole(file: string, data: string, mode?: number): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temporary, data, mode === undefined ? {} : { mode });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
