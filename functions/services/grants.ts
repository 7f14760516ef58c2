/**
 * A user's grants: one per application that holds tokens for them, read with the authorizations
 * that make them up (one Query), for the grants API and the settings pages alike.
 */
import { getApp, withoutSecret } from '#data/apps';
import { readUserAuthState } from '#data/authorizations';
import type { OAuthApp } from '#domain/apps';
import { type Grant, grantsOf } from '#domain/authorizations';
import { notFound } from '#shared/errors';

export async function grantsForUser(login: string): Promise<Grant[]> {
  const state = await readUserAuthState(login);
  return grantsOf(login, state.authorizations, state.grants.values());
}

/** The user's grant with this id; 404 otherwise. */
export async function grantById(login: string, id: number): Promise<Grant> {
  const grant = (await grantsForUser(login)).find((candidate) => candidate.id === id);
  if (!grant) throw notFound();
  return grant;
}

/** The user's grant for an application, with the application; 404 when the user has not authorized it. */
export async function grantForApp(
  login: string,
  clientId: string | undefined,
): Promise<{ grant: Grant; app: OAuthApp }> {
  if (!clientId) throw notFound();
  const [grants, app] = await Promise.all([grantsForUser(login), getApp(clientId)]);
  const grant = grants.find((candidate) => candidate.clientId === clientId);
  if (!grant || !app) throw notFound();
  return { grant, app: withoutSecret(app) };
}
