import { countRepositories } from '#data/repositories';
import { getUser, hasTwoFactor } from '#data/users';
import type { User, UserStats } from '#domain/users';

/** A profile with the counts it shows. */
export interface Profile {
  readonly user: User;
  readonly stats: UserStats;
}

async function statsOf(login: string): Promise<UserStats> {
  const [repositories, twoFactor] = await Promise.all([countRepositories(login), hasTwoFactor(login)]);
  return { publicRepos: repositories.public, privateRepos: repositories.private, twoFactor };
}

/** The profile of `GET /user`: the caller's own account. */
export async function ownProfile(user: User): Promise<Profile> {
  return { user, stats: await statsOf(user.login) };
}

/** The profile of `GET /users/{login}`; `undefined` when there is no such user. */
export async function profileByLogin(login: string): Promise<Profile | undefined> {
  const [user, stats] = await Promise.all([getUser(login), statsOf(login)]);
  return user ? { user, stats } : undefined;
}
