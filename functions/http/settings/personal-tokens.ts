import type { Authorization } from '#domain/authorizations';
import type { User } from '#domain/users';
import { personalTokenOf } from '#services/authorizations';
import { idParam } from '../authorizations/fields.ts';
import { pageNotFound } from './settings-page.ts';

/** One of the user's personal access tokens by `:authorization_id`; 404 for anything else. */
export async function personalToken(user: User, authorizationId: string | undefined): Promise<Authorization> {
  const id = idParam(authorizationId);
  if (id === undefined) throw pageNotFound();
  return personalTokenOf(user.login, id);
}
