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
  isAcceptableClientSecret,
  newClientId,
  newClientSecret,
  type OAuthApp,
  type OwnedApp,
} from '#domain/apps';
import { sameAsciiCaseless } from '#domain/ascii-case';
import { notFound } from '#shared/errors';
import { matchesParamRule } from '#shared/validate';

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

/**
 * Credentials an administrator gives to host a well-known public client (gh's OAuth app as GitHub
 * Enterprise Server ships it) instead of minting new ones.
 */
export interface GivenCredentials {
  readonly clientId: string;
  /** Minted when absent. */
  readonly clientSecret?: string;
}

/** Why given credentials cannot be registered (the admin CLI prints the message). */
export class AppCredentialsError extends Error {}

/**
 * Registers an application; its client secret is returned this once (only its hash is stored).
 * Given credentials must have the shapes the routes accept (the client id: the `client_id` path
 * rule, 20 letters and digits), and a client id already registered is refused by the write itself.
 */
export async function registerApp(
  input: NewApp,
  given?: GivenCredentials,
): Promise<{ app: OAuthApp; clientSecret: string }> {
  const clientId = given?.clientId ?? newClientId();
  const clientSecret = given?.clientSecret ?? newClientSecret();
  if (!matchesParamRule('client_id', clientId))
    throw new AppCredentialsError(`invalid client id "${clientId}": 20 letters and digits, as GitHub's`);
  if (!isAcceptableClientSecret(clientSecret))
    throw new AppCredentialsError('invalid client secret: 8 to 255 printable ASCII characters, no spaces');
  const app = await createApp({ ...input, clientId, secretHash: hashSecret(clientSecret) });
  if (!app) throw new AppCredentialsError(`client id "${clientId}" is already registered`);
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
