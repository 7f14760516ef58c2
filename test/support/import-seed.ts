import { nextId } from '#data/counters';
import { getImport } from '#data/imports/items';
import { addAuthors, enterStatus, recordProgress, setLargeFiles } from '#data/imports/progress';
import { createImport } from '#data/imports/requests';
import { DEFAULT_IMPORT_CHOICES, type ImportAuthor, type LargeFile } from '#domain/imports';
import { basicAuth } from './stack.ts';

/*
 * Import state for page tests, written with the data layer's own functions (the worker's writes),
 * so a test can put an import in any status without running the workflow. The stack of the test
 * file must be started first (it points the data layer at the file's table).
 */

/** A new empty repository of `login`, made through the API. */
export async function createRepository(baseUrl: string, login: string, password: string, name: string) {
  const response = await fetch(`${baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: basicAuth(login, password), 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (response.status !== 201)
    throw new Error(`repository ${name}: ${response.status} ${await response.text()}`);
}

/** An import of `owner/repo` in `importing`, at `percent`, with the given authors and large files. */
export async function seedImport(
  owner: string,
  repo: string,
  options: {
    readonly authors?: readonly Omit<ImportAuthor, 'id'>[];
    readonly largeFiles?: readonly LargeFile[];
    readonly percent?: number;
    readonly commitCount?: number;
  } = {},
) {
  const importId = await nextId('import');
  const created = await createImport({
    ownerLogin: owner,
    repoName: repo,
    importId,
    vcs: 'git',
    vcsUrl: `https://origin.example/${repo}.git`,
    status: 'importing',
    choices: DEFAULT_IMPORT_CHOICES,
  });
  if (created.kind !== 'created') throw new Error(`import not created: ${created.kind}`);
  const { attempt } = created.record;
  await recordProgress(owner, repo, attempt, {
    percent: options.percent ?? 10,
    commitCount: options.commitCount ?? 250,
  });
  if (options.authors) await addAuthors(owner, repo, importId, attempt, options.authors);
  if (options.largeFiles) await setLargeFiles(owner, repo, importId, attempt, options.largeFiles);
  return { importId, attempt };
}

/** Moves the import's current attempt on, as the worker would. */
export async function advance(
  owner: string,
  repo: string,
  change: Parameters<typeof recordProgress>[3] & { readonly errorMessage?: string },
) {
  const record = await getImport(owner, repo);
  if (!record) throw new Error('no import');
  if (change.status === 'error')
    return enterStatus(owner, repo, record.attempt, 'error', {
      failedStep: 'raw',
      errorMessage: change.errorMessage ?? 'failed',
    });
  return recordProgress(owner, repo, record.attempt, change);
}
