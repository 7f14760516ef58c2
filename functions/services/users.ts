/** Profiles: a user with the counts their profile shows, read with the user in one GetItem. */
import { getProfile, getProfileRecent } from '#data/users';
import type { Profile, User } from '#domain/users';
import { notFound } from '#shared/errors';

/**
 * The profile of `GET /user`: the caller's own account, as authentication just read it (the
 * container's copy from that read, at most 10 s old).
 */
export async function ownProfile(user: User): Promise<Profile> {
  const profile = await getProfileRecent(user.login, 10_000);
  if (!profile) throw notFound();
  return profile;
}

/** The profile of `GET /users/{login}`; 404 when there is no such user. */
export async function profileByLogin(login: string): Promise<Profile> {
  const profile = await getProfile(login);
  if (!profile) throw notFound();
  return profile;
}
