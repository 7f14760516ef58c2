/**
 * What a cancelled import leaves on disk: its working directories, and (unless the owner pushed
 * work of their own) what it published to the hosted repository. An absent bare repository is
 * served as an empty one, so removing it empties the repository.
 */
import { rm } from 'node:fs/promises';
import { hostedRepositoryPath, importWorkRoot } from './hosted-paths.ts';

export interface ImportDirs {
  readonly importWorkDir: string;
  readonly repositoriesDir: string;
}

/** Removes the import's working directories and, with `emptyRepository`, the hosted repository. */
export async function removeImportFiles(
  dirs: ImportDirs,
  owner: string,
  repo: string,
  options: { readonly emptyRepository: boolean },
): Promise<void> {
  await rm(importWorkRoot(dirs.importWorkDir, owner, repo), { recursive: true, force: true });
  if (options.emptyRepository)
    await rm(hostedRepositoryPath(dirs.repositoriesDir, owner, repo), { recursive: true, force: true });
}
