/**
 * SSH keys of users and deploy keys of repositories: parsing the offered key, the owner-only rule
 * for deploy keys, and remembering which application's token added a key (revoking the grant
 * removes it).
 */
import {
  createDeployKey,
  createUserKey,
  deleteDeployKey,
  deleteUserKey,
  getDeployKey,
  getUserKey,
  listDeployKeys,
  listUserKeys,
} from '#data/public-keys';
import { getRepository } from '#data/repositories';
import {
  type DeployKey,
  INVALID_KEY,
  KEY_IN_USE,
  keyTitle,
  mayManageDeployKeys,
  parsePublicKey,
  type UserKey,
} from '#domain/public-keys';
import type { Repository } from '#domain/repositories';
import { notFound, validationFailed } from '#shared/errors';
import type { Caller } from './authenticate.ts';

type UserCaller = Extract<Caller, { kind: 'user' }>;

export interface KeyInput {
  readonly key: string;
  readonly title?: string | undefined;
}

/** The application whose token is calling; empty for a password or a personal token. */
const clientIdOf = (caller: UserCaller): string => (caller.via === 'token' ? caller.token.clientId : '');

function parsedKey(input: KeyInput) {
  const parsed = parsePublicKey(input.key);
  if (!parsed.valid) throw validationFailed([INVALID_KEY]);
  return { key: parsed.key, fingerprint: parsed.fingerprint, title: keyTitle(input.title, parsed.comment) };
}

export const userKeys = (login: string): Promise<UserKey[]> => listUserKeys(login);

export async function userKey(login: string, id: number): Promise<UserKey> {
  const key = await getUserKey(login, id);
  if (!key) throw notFound();
  return key;
}

/** Adds an SSH key; 422 when it does not parse or is registered anywhere already. */
export async function addUserKey(caller: UserCaller, input: KeyInput): Promise<UserKey> {
  const result = await createUserKey(caller.user.login, {
    ...parsedKey(input),
    clientId: clientIdOf(caller),
  });
  if (result.kind === 'key-taken') throw validationFailed([KEY_IN_USE]);
  return result.key;
}

export async function removeUserKey(login: string, id: number): Promise<void> {
  if (!(await deleteUserKey(login, id))) throw notFound();
}

/** The repository, when `login` may manage its deploy keys (its owner); 404 otherwise. */
export async function managedRepository(login: string, owner: string, name: string): Promise<Repository> {
  const repository = await getRepository(owner, name);
  if (!repository || !mayManageDeployKeys(repository, login)) throw notFound();
  return repository;
}

export const deployKeys = (repository: Repository): Promise<DeployKey[]> =>
  listDeployKeys(repository.ownerLogin, repository.name);

export async function deployKey(repository: Repository, id: number): Promise<DeployKey> {
  const key = await getDeployKey(repository.ownerLogin, repository.name, id);
  if (!key) throw notFound();
  return key;
}

/** Adds a deploy key (read-write unless `readOnly`), remembering who added it and with which app. */
export async function addDeployKey(
  caller: UserCaller,
  repository: Repository,
  input: KeyInput & { readonly readOnly?: boolean | undefined },
): Promise<DeployKey> {
  const result = await createDeployKey(
    { owner: repository.ownerLogin, repo: repository.name, repositoryId: repository.id },
    {
      ...parsedKey(input),
      readOnly: input.readOnly ?? false,
      createdBy: caller.user.login,
      clientId: clientIdOf(caller),
    },
  );
  if (result.kind === 'repository-gone') throw notFound();
  if (result.kind === 'key-taken') throw validationFailed([KEY_IN_USE]);
  return result.key;
}

export async function removeDeployKey(repository: Repository, id: number): Promise<void> {
  if (!(await deleteDeployKey(repository.ownerLogin, repository.name, id))) throw notFound();
}
