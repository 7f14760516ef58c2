import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeWhole } from './whole-file.ts';

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
      await writeWhole(join(workDir, fileName), JSON.stringify(state));
    },
  };
}
