import type { Scope } from '#domain/scopes';
import type { User } from '#domain/users';
import { type StoredApp, toApp } from './apps.ts';
import { getItems, itemOf } from './client.ts';
import { appKey, grantGenerationKey, grantKey, userProfileKey } from './keys.ts';
import { liveTokensOf } from './token-ring.ts';
import { toUser } from './users.ts';

/** What the authorize page and its consent form need about a signed-in user and an application. */
export interface UserAndGrant {
  readonly user?: User;
  readonly app?: StoredApp;
  /** Whether the user holds a live token of the application. */
  readonly granted: boolean;
  /** The union of the scopes of the application's live tokens for the user (sorted). */
  readonly grantedScopes: readonly Scope[];
  /** The user's grant generation for the application (0 until its first revocation). */
  readonly generation: number;
}

/**
 * The user, the application, the user's grant for it (its token ring: the scopes already granted)
 * and its generation, in one strongly consistent BatchGetItem: the authorize page's reads once
 * the session named the user.
 */
export async function getUserAppAndGrant(login: string, clientId: string): Promise<UserAndGrant> {
  const keys = {
    user: userProfileKey(login),
    app: appKey(clientId),
    grant: grantKey(login, clientId),
    generation: grantGenerationKey(login, clientId),
  };
  const items = await getItems(Object.values(keys), true);
  const user = itemOf(items, keys.user);
  const app = itemOf(items, keys.app);
  const grant = itemOf(items, keys.grant);
  // A grant item without an id has no live token (see token-ring.ts).
  const tokens = grant?.id !== undefined ? liveTokensOf(grant) : [];
  const scopes = new Set<Scope>(tokens.flatMap((token) => token.scopes));
  return {
    ...(user ? { user: toUser(user) } : {}),
    ...(app ? { app: toApp(app) } : {}),
    granted: tokens.length > 0,
    grantedScopes: [...scopes].sort(),
    generation: Number(itemOf(items, keys.generation)?.generation ?? 0),
  };
}
