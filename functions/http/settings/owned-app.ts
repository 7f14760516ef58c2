import { getApp, type StoredApp } from '#data/apps';
import { sameAsciiCaseless } from '#domain/ascii-case';
import type { User } from '#domain/users';
import { pageNotFound } from './settings-page.ts';

/** The application `:client_id` when `user` owns it; 404 otherwise (others' apps do not exist here). */
export async function ownedApp(user: User, clientId: string | undefined): Promise<StoredApp> {
  const app = clientId ? await getApp(clientId) : undefined;
  if (!app || !sameAsciiCaseless(app.ownerLogin, user.login)) throw pageNotFound();
  return app;
}
