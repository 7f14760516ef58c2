/**
 * What a chunked raw step keeps between chunks (the Lambda function may be killed between them, or
 * during one): a JSON cursor in the attempt's directory, read whole and written whole under a
 * temporary name then renamed, so a function killed mid-write leaves the previous cursor.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ChunkCursor<State> {
  /** The saved state, or `initial()` before the first chunk. */
  load(workDir: string): Promise<State>;
  save(workDir: string, state: State): Promise<void>;
}

export function chunkCursor<State>(fileName: string, initial: () => State): ChunkCursor<State> {
  return {
    async load(workDir) {
      try {
        return JSON.parse(await readFile(join(workDir, fileName), 'utf8')) as State;
      } catch {
        return initial();
      }
    },
    async save(workDir, state) {
      const file = join(workDir, fileName);
      const temporary = `${file}.${randomBytes(4).toString('hex')}`;
      await writeFile(temporary, JSON.stringify(state));
      await rename(temporary, file);
    },
  };
}
