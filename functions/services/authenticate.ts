import { getApp, withoutSecret } from '#data/apps';
import {
  getAppAndToken,
  lookupAppToken,
  lookupToken,
  recordTokenUse,
  type TokenLookup,
} from '#data/authorizations';
import { now } from '#data/client';
import { getUserRecent } from '#data/users';
import { type OAuthApp, secretMatches } from '#domain/apps';
import { isExpired, isLastUseStale } from '#domain/authorizations';
import { bearerChallenge, mcpResource, type ResourceUrls, restResource, tokenOpens } from '#domain/resources';
import { satisfies } from '#domain/scopes';
import { hashToken, hasValidChecksum, tagOf } from '#domain/tokens';
import type { User } from '#domain/users';
import { signIn } from '#services/sign-in';
import { config, vendorHeader } from '#shared/config';
import { type CredentialSource, header, presentedCredentials } from '#shared/credentials';
import { badCredentials, HttpError, notFound, requiresAuthentication } from '#shared/errors';
import type { Route } from '#shared/routes';
import { publicUrls } from '#shared/urls';
import { matchesParamRule } from '#shared/validate';

/** Who is calling, once their credentials have been checked. */
export type Caller =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'user'; readonly user: User; readonly via: 'password' }
  | { readonly kind: 'user'; readonly user: User; readonly via: 'token'; readonly token: TokenLookup }
  /** An application, with the token named in the route's `{access_token}` if there is one. */
  | { readonly kind: 'app'; readonly app: OAuthApp; readonly token?: TokenLookup }
  /**
   * The holder of an LFS action token (`RemoteAuth`), on an `lfs-action` route only: not checked
   * here, since what it grants depends on the repository and object the route's service resolves
   * (`services/lfs-api.ts`). To every other check it is nobody.
   */
  | { readonly kind: 'lfs-action'; readonly token: string };

const ANONYMOUS: Caller = { kind: 'anonymous' };

const TWO_FACTOR_DOCS = '/overview/other-authentication-methods#working-with-two-factor-authentication';

function otpRequired(): HttpError {
  return new HttpError(401, 'Must specify two-factor authentication OTP code.', {
    documentationPath: TWO_FACTOR_DOCS,
    headers: { [vendorHeader(config().vendor, 'OTP')]: 'required; app' },
  });
}

const loginAttemptsExceeded = (): HttpError =>
  new HttpError(403, 'Maximum number of login attempts exceeded. Please try again later.');

/** Every application-side call of a suspended application (its own credentials were right). */
const applicationSuspended = (): HttpError =>
  new HttpError(403, 'Your application has been suspended. Contact support@github.com.');

const passwordOnly = (): HttpError =>
  new HttpError(401, 'This API can only be accessed with username and password Basic Auth');

/** Basic authentication with a password (and, for two-factor users, the OTP header). */
async function userByPassword(event: CredentialSource, login: string, password: string): Promise<Caller> {
  const result = await signIn(
    login,
    password,
    header(event, vendorHeader(config().vendor, 'OTP'))?.trim() || undefined,
  );
  switch (result.kind) {
    case 'ok':
      return { kind: 'user', user: result.user, via: 'password' };
    case 'locked-out':
      throw loginAttemptsExceeded();
    case 'otp-required':
    case 'otp-invalid':
      throw otpRequired();
    default:
      throw badCredentials();
  }
}

/**
 * The token's lookup and, for a `gho_` token, its application's suspension state from the item
 * named by the tag the token carries, both in one strongly consistent round trip. Well-formed
 * tokens only: a look-alike costs no database read.
 */
async function readToken(token: string): Promise<{ lookup?: TokenLookup; appSuspended?: boolean }> {
  if (!hasValidChecksum(token)) return {};
  const tag = tagOf(token);
  return tag ? lookupAppToken(hashToken(token), tag) : { lookup: await lookupToken(hashToken(token)) };
}

/**
 * A token authenticates while it exists and has not expired, its user exists and, for an
 * application's token, the application exists and is not suspended. The suspension state is read
 * strongly consistently on every request, with the token (its tag names the state item) or, for
 * a token or application from before tags, from the application item in a second round trip; so
 * suspending an application stops all its tokens at once and reinstating it restores them (see
 * docs/decisions.md, "Suspended application" and "One round trip for an OAuth app token").
 */
async function userByToken(
  token: string,
  resource: ResourceServed,
  refused = badCredentials,
): Promise<Caller> {
  const { lookup, appSuspended } = await readToken(token);
  // An expired user token is refused like a revoked one (GitHub: 401 Bad credentials); so is a
  // token granted for another resource (an MCP token on the REST API, RFC 8707).
  if (!lookup || isExpired(lookup.authorization, Date.now())) throw refused();
  if (!tokenOpens(lookup.authorization, resource.resource, resource.urls)) throw refused();
  const readApp = lookup.clientId !== '' && appSuspended === undefined;
  // The profile may be up to 10 s old; the token itself was just read strongly consistently.
  // Both reads go out together: at most one more round trip after the lookup, not two.
  const [user, app] = await Promise.all([
    getUserRecent(lookup.login, 10_000),
    readApp ? getApp(lookup.clientId) : undefined,
  ]);
  const suspended = lookup.clientId !== '' && (appSuspended ?? (!app || app.suspended));
  if (!user || suspended) throw refused();
  // "Last used" to the hour: at most one extra write per token per hour.
  if (isLastUseStale(lookup.lastUsedAt, Date.now())) await recordTokenUse(lookup, now());
  return { kind: 'user', user, via: 'token', token: lookup };
}

/**
 * An application's own credentials: Basic `client_id:client_secret`, or the `client_id` and
 * `client_secret` query parameters (Octokit sends them that way). GitHub answers failures here
 * with 404, not 401, so as not to confirm which client ids exist.
 */
async function appByCredentials(event: CredentialSource, token: string | undefined): Promise<Caller> {
  const presented = presentedCredentials(event);
  const query = event.queryStringParameters ?? {};
  const [clientId, secret] =
    presented.kind === 'basic'
      ? [presented.username, presented.password]
      : [query.client_id, query.client_secret];
  // A client_id of the wrong shape names no application: no read (and no over-long key).
  if (!clientId || !secret || !matchesParamRule('client_id', clientId)) throw notFound();
  // The token the route acts on is read in the same round trip as the application.
  const found =
    token && hasValidChecksum(token)
      ? await getAppAndToken(clientId, hashToken(token))
      : { app: await getApp(clientId) };
  if (!found.app || !secretMatches(secret, found.app.secretHash)) throw notFound();
  // Only an application that proved its secret learns that it is suspended.
  if (found.app.suspended) throw applicationSuspended();
  const app = withoutSecret(found.app);
  return { kind: 'app', app, ...('token' in found && found.token ? { token: found.token } : {}) };
}

/** The token in a Basic header: `login:<token>` or `<token>:x-oauth-basic`, as GitHub accepts. */
function tokenInBasic(username: string, password: string): string | undefined {
  if (hasValidChecksum(password)) return password;
  if (hasValidChecksum(username) && (password === '' || password === 'x-oauth-basic')) return username;
  return undefined;
}

/**
 * Checks the request's credentials against what its route accepts. Credentials that are sent are
 * always verified (a wrong password is 401 even on an anonymous route, as on GitHub); routes that
 * need a user answer 401 `Requires authentication` when none was sent. `event` is an API Gateway
 * proxy event or the Git front end's request in its shape. `appToken` is the token an
 * application-side route acts on: the path's `{access_token}` (2015), or the body's
 * `access_token` (the 2020 routes), read with the application in one round trip.
 */
export async function authenticate(
  event: CredentialSource,
  route: Pick<Route, 'auth'>,
  appToken: string | undefined = event.pathParameters?.access_token,
): Promise<Caller> {
  if (route.auth === 'app') return appByCredentials(event, appToken);
  if (route.auth === 'bearer')
    return authenticateForResource(event, mcpResource(publicUrls(config(), event)));
  const presented = presentedCredentials(event);
  let caller: Caller;
  switch (presented.kind) {
    case 'none':
      caller = ANONYMOUS;
      break;
    case 'basic': {
      const token = tokenInBasic(presented.username, presented.password);
      caller = token
        ? await userByToken(token, restApi(event))
        : await userByPassword(event, presented.username, presented.password);
      break;
    }
    case 'token':
      caller = await userByToken(presented.token, restApi(event));
      break;
    case 'remote-auth':
      if (route.auth !== 'lfs-action') throw badCredentials();
      return { kind: 'lfs-action', token: presented.token };
    default:
      throw badCredentials();
  }
  if (route.auth === 'password' && caller.kind === 'user' && caller.via === 'token') throw passwordOnly();
  if ((route.auth === 'user' || route.auth === 'password') && caller.kind !== 'user')
    throw requiresAuthentication();
  return caller;
}

/** A protected resource as the request names it: its identifier and the addresses it is named from. */
interface ResourceServed {
  readonly resource: string;
  readonly urls: ResourceUrls;
}

/** The REST API (and the Git paths beside it), which every token without a resource opens. */
const restApi = (event: CredentialSource): ResourceServed => {
  const urls = publicUrls(config(), event);
  return { resource: restResource(urls), urls };
};

/** The caller of a resource other than the REST API: always a user's token. */
export type TokenCaller = Extract<Caller, { kind: 'user'; via: 'token' }>;

/**
 * For another protected resource of this service (the MCP endpoint at `mcpResource(urls)`, the
 * `bearer` routes): the user a token in `Authorization: Bearer` stands for when it was granted for
 * `resource` (RFC 8707). Nothing sent is 401 `Requires authentication`; any other credentials (a
 * password, a token in the query string, which MCP forbids, another scheme) or a token that does
 * not open `resource` (a REST API token, an expired or revoked one) are 401 `Bad credentials`.
 * Both carry `WWW-Authenticate` naming the resource's metadata (RFC 9728 §5.1), so that an MCP
 * client starts its OAuth flow.
 */
export async function authenticateForResource(
  event: CredentialSource,
  resource: string,
): Promise<TokenCaller> {
  const urls = publicUrls(config(), event);
  const challenge = (error?: 'invalid_token') => () =>
    new HttpError(401, error ? 'Bad credentials' : 'Requires authentication', {
      headers: { 'WWW-Authenticate': bearerChallenge(resource, error ? { error } : undefined) },
    });
  const authorization = header(event, 'authorization');
  const presented = presentedCredentials(event);
  if (authorization === undefined && presented.kind === 'none') throw challenge()();
  if (presented.kind !== 'token' || !/^\s*bearer\s/i.test(authorization ?? ''))
    throw challenge('invalid_token')();
  return (await userByToken(presented.token, { resource, urls }, challenge('invalid_token'))) as TokenCaller;
}

/**
 * A token lacking every scope the route accepts gets 404, GitHub's usual answer (it does not
 * reveal that the resource exists). Scopes only ever narrow what the token's user may do.
 */
export function checkScopes(caller: Caller, accepted: readonly string[]): void {
  if (caller.kind === 'user' && caller.via === 'token' && !satisfies(caller.token.scopes, accepted))
    throw notFound();
}

/** True when the caller is a token that grants at least one of `accepted` (or a password). */
export function callerHasScope(caller: Caller, accepted: readonly string[]): boolean {
  return caller.kind === 'user' && (caller.via === 'password' || satisfies(caller.token.scopes, accepted));
}
