import { getAuthorization, readUserAuthState } from '#data/authorizations';
import { type Authorization, isPersonal } from '#domain/authorizations';
import type { User } from '#domain/users';
import { idParam } from '../authorizations/fields.ts';
import { pageNotFound } from './settings-page.ts';

/** The user's personal access tokens, newest first. */
export async function personalTokens(user: User): Promise<Authorization[]> {
  const { authorizations } = await readUserAuthState(user.login);
  return authorizations.filter(isPersonal).sort((a, b) => b.id - a.id);
}

/** One of the user's personal access tokens by `:authorization_id`; 404 for anything else. */
export async function personalToken(user: User, authorizationId: string | undefined): Promise<Authorization> {
  const id = idParam(authorizationId);
  const authorization = id === undefined ? undefined : await getAuthorization(user.login, id);
  if (!authorization || !isPersonal(authorization)) throw pageNotFound();
  return authorization;
}
