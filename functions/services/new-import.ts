/**
 * The import form's use cases (issue 37): a new repository and its import in one step, and the
 * live check of a name. The repository and the import are made by the same services the API uses
 * (`createForOwner`, `startImport`); a start that fails after the repository was made removes the
 * empty repository again (decision 0136), so the form can simply be sent again.
 */
import { getRepository, removeEmptyRepository } from '#data/repositories';
import type { Import } from '#domain/imports';
import {
  type NewImportInput,
  type NewImportProblem,
  nameProblem,
  nameTaken,
  newImportProblems,
} from '#domain/new-import';
import type { Repository } from '#domain/repositories';
import type { User } from '#domain/users';
import { config } from '#shared/config';
import { validationFailed } from '#shared/errors';
import { log } from '#shared/log';
import { startImport } from './imports.ts';
import { createForOwner } from './repositories.ts';

/** Whether `owner` may name a new repository `name`, and what to tell them. */
export async function nameAvailability(
  owner: User,
  name: string,
): Promise<{ readonly available: boolean; readonly message: string }> {
  const problem = nameProblem(name);
  if (problem) return { available: false, message: problem };
  if (await getRepository(owner.login, name)) return { available: false, message: nameTaken(name) };
  return { available: true, message: `${name} is available.` };
}

/** A refusal of the form: GitHub's 422 with one field error per problem (the page shows each beside its field). */
const refused = (problems: readonly NewImportProblem[]) =>
  validationFailed(
    problems.map((problem) => ({
      resource: problem.field === 'name' ? 'Repository' : 'Import',
      field: problem.field,
      code: 'custom' as const,
      message: problem.message,
    })),
  );

/**
 * Makes the repository and starts its import as its owner, after checking every field (422 with
 * all problems, nothing made). When the start fails after the repository was made (the workflow
 * unavailable, a conflict), the empty repository is removed before the error goes on.
 */
export async function startNewImport(
  owner: User,
  input: NewImportInput,
): Promise<{ readonly repository: Repository; readonly record: Import }> {
  const problems = newImportProblems(input, config().originAllowedAddresses);
  if (!problems.some((problem) => problem.field === 'name') && (await getRepository(owner.login, input.name)))
    problems.push({ field: 'name', message: nameTaken(input.name) });
  if (problems.length > 0) throw refused(problems);

  // Taken meanwhile: createForOwner's conditional write refuses it (422 on `name`).
  const repository = await createForOwner(owner, { name: input.name, private: input.private });
  try {
    const record = await startImport(
      { kind: 'user', user: owner, via: 'password' },
      owner.login,
      repository.name,
      {
        vcsUrl: input.vcsUrl,
        vcsUsername: input.vcsUsername,
        vcsPassword: input.vcsPassword,
        choices: {},
      },
    );
    return { repository, record };
  } catch (error) {
    const removed = await removeEmptyRepository(repository).catch(() => false);
    if (!removed)
      log('warn', 'The repository of a failed import start was not removed', {
        owner: repository.ownerLogin,
        repo: repository.name,
      });
    throw error;
  }
}
