/**
 * OAuth applications as their owners manage them on the developer settings pages: registering,
 * listing, the tokens an application holds, and rotating its client secret.
 */
import { appsOwnedBy, rotateClientSecret, tokensOfApp } from '#data/app-directory';
import {
  type AppSwitch,
  createApp,
  getApp,
  getApps,
  type NewApp,
  setSuspended,
  setAppSwitch as storeAppSwitch,
  withoutSecret,
} from '#data/apps';
import {
  type AppTokenSummary,
  hashSecret,
  newClientId,
  newClientSecret,
  type OAuthApp,
  type OwnedApp,
} from '#domain/apps';
import { sameAsciiCaseless } from '#domain/ascii-case';
import { notFound } from '#shared/errors';

/** The applications named, by client_id, in one BatchGetItem (for names and URLs in replies). */
export async function appDirectory(clientIds: Iterable<string>): Promise<Map<string, OAuthApp>> {
  const apps = await getApps(clientIds);
  return new Map([...apps].map(([clientId, app]) => [clientId, withoutSecret(app)]));
}

/** The application when `login` owns it; 404 otherwise (others' applications do not exist here). */
export async function ownedApp(login: string, clientId: string | undefined): Promise<OAuthApp> {
  const found = clientId ? await getApp(clientId) : undefined;
  if (!found || !sameAsciiCaseless(found.ownerLogin, login)) throw notFound();
  return withoutSecret(found);
}

export const appsOf = (login: string, limit: number): Promise<{ apps: OwnedApp[]; more: boolean }> =>
  appsOwnedBy(login, limit);

export const tokensOf = (
  app: OAuthApp,
  limit: number,
): Promise<{ tokens: AppTokenSummary[]; more: boolean }> => tokensOfApp(app.clientId, limit);

/** Registers an application; its client secret is returned this once (only its hash is stored). */
export async function registerApp(input: NewApp): Promise<{ app: OAuthApp; clientSecret: string }> {
  const clientSecret = newClientSecret();
  const app = await createApp({ ...input, clientId: newClientId(), secretHash: hashSecret(clientSecret) });
  return { app, clientSecret };
}

/** A new client secret, returned this once; the old one fails on the very next request. */
export async function rotateSecret(app: OAuthApp): Promise<string> {
  const clientSecret = newClientSecret();
  if (!(await rotateClientSecret(app.clientId, app.ownerLogin, hashSecret(clientSecret)))) throw notFound();
  return clientSecret;
}

/** Suspends or reinstates an application (the admin CLI); undefined when there is none. */
export const setAppSuspended = (clientId: string, suspended: boolean): Promise<OAuthApp | undefined> =>
  setSuspended(clientId, suspended);

/**
 * One of an application's settings on or off (the admin CLI and the developer settings page):
 * "Expire user authorization tokens" (`expireUserTokens`) or "Enable Device Flow"
 * (`deviceFlowEnabled`); undefined when there is no such application. Tokens and codes already
 * issued keep their terms.
 */
export const setAppSwitch = (
  clientId: string,
  setting: AppSwitch,
  on: boolean,
): Promise<OAuthApp | undefined> => storeAppSwitch(clientId, setting, on);
