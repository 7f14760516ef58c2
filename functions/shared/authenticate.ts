import type { APIGatewayProxyEvent } from 'aws-lambda';
import { getUserWithCredential } from '#data/users';
import { verifyPassword } from '#domain/passwords';
import type { User } from '#domain/users';
import type { AuthKind } from '#http/routes';
import { presentedCredentials } from './credentials.ts';
import { badCredentials, requiresAuthentication } from './errors.ts';

/** Who is calling, once their credentials have been checked. */
export type Caller =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'user'; readonly user: User; readonly via: 'password' };

const ANONYMOUS: Caller = { kind: 'anonymous' };

async function userByPassword(login: string, password: string): Promise<Caller> {
  const found = await getUserWithCredential(login);
  // verifyPassword runs scrypt even for unknown logins, so timing does not reveal which exist.
  const valid = await verifyPassword(password, found?.credential.passwordHash);
  if (!found || !valid) throw badCredentials();
  return { kind: 'user', user: found.user, via: 'password' };
}

/**
 * Checks the request's credentials against what its route accepts. Credentials that are sent are
 * always verified (a wrong password is 401 even on an anonymous route, as on GitHub); routes that
 * need a user answer 401 `Requires authentication` when none was sent.
 */
export async function authenticate(event: APIGatewayProxyEvent, auth: AuthKind): Promise<Caller> {
  const presented = presentedCredentials(event);
  let caller: Caller;
  switch (presented.kind) {
    case 'none':
      caller = ANONYMOUS;
      break;
    case 'basic':
      caller = await userByPassword(presented.username, presented.password);
      break;
    default:
      // OAuth tokens are not issued yet (authorizations arrive in a later change): none can be valid.
      throw badCredentials();
  }
  if ((auth === 'user' || auth === 'password') && caller.kind !== 'user') throw requiresAuthentication();
  return caller;
}
