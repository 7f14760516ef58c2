import { getApp, type StoredApp } from '#data/apps';
import { grantsOf, readUserAuthState } from '#data/authorizations';
import type { Grant } from '#domain/authorizations';
import type { User } from '#domain/users';
import { pageNotFound } from './settings-page.ts';

/** The user's grant for `clientId`, with its application; 404 when the user has not authorized it. */
export async function grantOf(
  user: User,
  clientId: string | undefined,
): Promise<{ grant: Grant; app: StoredApp }> {
  if (!clientId) throw pageNotFound();
  const [state, app] = await Promise.all([readUserAuthState(user.login), getApp(clientId)]);
  const grant = grantsOf(state, user.login).find((candidate) => candidate.clientId === clientId);
  if (!grant || !app) throw pageNotFound();
  return { grant, app };
}
