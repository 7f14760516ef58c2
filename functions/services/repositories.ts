/** Repositories: creating one for its owner, and reading one as the caller may see it. */
import { createRepository, getRepository, type NewRepository } from '#data/repositories';
import { getUser } from '#data/users';
import { canRead, type Repository } from '#domain/repositories';
import type { User } from '#domain/users';
import { notFound, validationFailed } from '#shared/errors';
import { type Caller, callerHasScope } from './authenticate.ts';

/** A new repository of `owner`; 422 when the name is taken on the account. */
export async function createForOwner(
  owner: User,
  input: Omit<NewRepository, 'ownerLogin'>,
): Promise<Repository> {
  const repository = await createRepository({ ...input, ownerLogin: owner.login });
  if (!repository) {
    throw validationFailed([
      {
        resource: 'Repository',
        field: 'name',
        code: 'custom',
        message: 'name already exists on this account',
      },
    ]);
  }
  return repository;
}

/**
 * The repository and its owner, when the caller may see it: a private repository is 404 to
 * everyone but its owner, and to the owner's tokens without `repo`, as on GitHub.
 */
export async function visibleRepository(
  caller: Caller,
  ownerLogin: string,
  name: string,
): Promise<{ repository: Repository; owner: User }> {
  const [repository, owner] = await Promise.all([getRepository(ownerLogin, name), getUser(ownerLogin)]);
  const login = caller.kind === 'user' ? caller.user.login : undefined;
  if (!repository || !owner || !canRead(repository, login)) throw notFound();
  if (repository.private && !callerHasScope(caller, ['repo'])) throw notFound();
  return { repository, owner };
}
