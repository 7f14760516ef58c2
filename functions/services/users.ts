/** Users as other callers see them. */
import { getUser } from '#data/users';
import type { User } from '#domain/users';
import { notFound } from '#shared/errors';

/** The user with this login; 404 otherwise. */
export async function userByLogin(login: string): Promise<User> {
  const user = await getUser(login);
  if (!user) throw notFound();
  return user;
}
