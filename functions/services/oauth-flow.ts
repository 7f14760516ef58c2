/**
 * The OAuth 2.0 authorization code flow (spec §4.4) above the data layer: checking an authorize
 * request, deciding whether the user must be asked, issuing codes, and exchanging a code for a
 * token exactly once. The pages and the token endpoint call one function here each.
 */

import { getApp, type StoredApp } from '#data/apps';
import { deleteAuthorization, lookupToken } from '#data/authorizations';
import { getUserAppAndGrant } from '#data/authorize-reads';
import { now } from '#data/client';
import { claimCodeItem, getAppAndCode, markReused, putCode } from '#data/codes';
import { isPublicClient } from '#domain/apps';
import {
  type AuthorizeParams,
  CODE_FORMAT,
  CODE_TTL_SECONDS,
  hashCode,
  isPlausibleClientId,
  MAX_STATE_LENGTH,
  newCode,
  parseScopeParameter,
} from '#domain/authorize-request';
import { type AuthorizeErrorCode, authorizeErrorFields, OAuthError } from '#domain/oauth-errors';
import { checkChallenge, verifierMatches } from '#domain/pkce';
import {
  checkListedRedirectUri,
  checkRedirectUri,
  exchangeRedirectMatches,
  withQuery,
} from '#domain/redirect-uri';
import { checkRefreshResource, checkResources, type ResourceUrls } from '#domain/resources';
import { normalizeScopes, type Scope, satisfies } from '#domain/scopes';
import { checkClient, incorrectClient } from './oauth-client.ts';
import { authorizeClient, liveClient } from './public-clients.ts';
import { announceSecurityEvents, securityEvent, securityEventItems } from './security-log.ts';
import { type IssuedToken, issuedToken, newUserToken, storeUserToken } from './user-tokens.ts';

/** A checked authorize request: everything needed to ask the user and to issue a code. */
export interface AuthorizeRequest {
  readonly app: StoredApp;
  /** Where the code goes: the normalized `redirect_uri`, or the registered callback. */
  readonly target: string;
  /** The normalized `redirect_uri` the request named (bound to the code), or null. */
  readonly redirectUri: string | null;
  /** Requested scopes: known ones only, normalized. */
  readonly scopes: readonly Scope[];
  readonly state: string | null;
  readonly codeChallenge: string | null;
  /** The protected resource the token will be for (RFC 8707); null: the REST API. */
  readonly resource: string | null;
  /** The parameters as received, for the consent form's hidden fields. */
  readonly params: AuthorizeParams;
}

export type AuthorizeCheck =
  | { readonly kind: 'invalid'; readonly status: 400 | 404 | 429; readonly message: string }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'valid'; readonly request: AuthorizeRequest };

/** Errors go to the registered callback (GitHub's rule), or to a public client's checked redirect URI. */
const errorRedirect = (
  app: StoredApp,
  code: AuthorizeErrorCode,
  state: string | null,
  docsUrl: string,
  target = app.callbackUrl,
) =>
  withQuery(isPublicClient(app) ? target : app.callbackUrl, {
    ...authorizeErrorFields(code, docsUrl),
    state,
  });

/**
 * Checks an authorize request from scratch (the consent form's POST is checked again the same
 * way). Errors that cannot safely redirect are pages; the others redirect to the *registered*
 * callback, never to the `redirect_uri` that was sent.
 */
export async function checkAuthorizeRequest(
  params: AuthorizeParams,
  docsUrl: string,
  urls: ResourceUrls,
  read?: AuthorizeReads,
  /** The caller's address: what a client metadata document fetch is counted against. */
  address = 'unknown',
): Promise<AuthorizeCheck> {
  const clientId = params.client_id;
  if (!clientId) return { kind: 'invalid', status: 400, message: 'The client_id parameter is missing.' };
  const known = read && read.clientId === clientId ? read : undefined;
  const found = isPlausibleClientId(clientId)
    ? await authorizeClient(clientId, known ? (known.app ?? null) : undefined, address)
    : ({ kind: 'unknown' } as const);
  if (found.kind === 'invalid') return { kind: 'invalid', status: 400, message: found.message };
  if (found.kind === 'throttled') return { kind: 'invalid', status: 429, message: found.message };
  if (found.kind === 'unknown')
    return { kind: 'invalid', status: 404, message: 'There is no application with this client_id.' };
  const { app } = found;
  const publicClient = isPublicClient(app);
  const state = params.state ?? null;
  if (state !== null && state.length > MAX_STATE_LENGTH)
    return {
      kind: 'invalid',
      status: 400,
      message: `The state parameter is longer than ${MAX_STATE_LENGTH} characters.`,
    };
  if (params.response_type !== undefined && params.response_type !== 'code') {
    return {
      kind: 'invalid',
      status: 400,
      message:
        'Only the authorization code grant is supported: response_type must be "code" (or left out). The implicit grant is not supported.',
    };
  }
  if (app.suspended)
    return { kind: 'redirect', location: errorRedirect(app, 'application_suspended', state, docsUrl) };
  if (publicClient) {
    // Nowhere safe to redirect to until the redirect_uri is one the client listed.
    const listed = checkListedRedirectUri(params.redirect_uri, app.redirectUris);
    if (!listed.ok)
      return {
        kind: 'invalid',
        status: 400,
        message: 'The redirect_uri must be one of the redirect URIs this client lists.',
      };
  }
  const redirect = publicClient
    ? checkListedRedirectUri(params.redirect_uri, app.redirectUris)
    : checkRedirectUri(params.redirect_uri, app.callbackUrl);
  if (!redirect.ok)
    return { kind: 'redirect', location: errorRedirect(app, 'redirect_uri_mismatch', state, docsUrl) };
  const pkce = checkChallenge(params.code_challenge, params.code_challenge_method);
  if (!pkce.ok) return { kind: 'invalid', status: 400, message: pkce.message };
  if (publicClient && pkce.challenge === null)
    return {
      kind: 'invalid',
      status: 400,
      message:
        'This client has no secret: it must send a PKCE code_challenge with code_challenge_method S256.',
    };
  const resource = checkResources(params.resource === undefined ? [] : [params.resource], urls);
  if (!resource.ok)
    return {
      kind: 'redirect',
      location: errorRedirect(app, 'invalid_target', state, docsUrl, redirect.target),
    };
  return {
    kind: 'valid',
    request: {
      app,
      target: redirect.target,
      redirectUri: redirect.redirectUri,
      scopes: parseScopeParameter(params.scope),
      state,
      codeChallenge: pkce.challenge,
      resource: resource.resource,
      params,
    },
  };
}

/**
 * What the authorize page and its consent form read with the signed-in user, in the round trip
 * that reads the user (see `readWithUser` of the web stack): the application named by
 * `client_id`, the scopes the user already granted it, and the grant's generation.
 */
export interface AuthorizeReads {
  readonly clientId: string;
  readonly app: StoredApp | undefined;
  /** Whether the user holds a live token of the application (then they granted it `grantedScopes`). */
  readonly granted: boolean;
  readonly grantedScopes: readonly Scope[];
  readonly generation: number;
}

/** The reads of an authorize request, as the web stack made them with the user or, failing that, now. */
async function readsFor(
  login: string,
  clientId: string,
  read: AuthorizeReads | undefined,
): Promise<AuthorizeReads> {
  if (read?.clientId === clientId) return read;
  const { app, granted, grantedScopes, generation } = await getUserAppAndGrant(login, clientId);
  return { clientId, app, granted, grantedScopes, generation };
}

/** The reads for a request's `client_id` (one that could name an application), else none. */
export function authorizeReads(clientId: string | undefined) {
  if (!clientId || !isPlausibleClientId(clientId)) return undefined;
  return async (login: string) => {
    const { user, app, granted, grantedScopes, generation } = await getUserAppAndGrant(login, clientId);
    return { user, along: { clientId, app, granted, grantedScopes, generation } satisfies AuthorizeReads };
  };
}

/** Stores a code for the user's decision and returns where to send the browser with it. */
async function issueCode(
  login: string,
  request: AuthorizeRequest,
  scopes: readonly Scope[],
  grantGeneration: number,
  consented = false,
): Promise<string> {
  const code = newCode();
  // A consent is the person authorizing the application: its security event is stored with the code.
  const event = consented
    ? securityEvent({
        kind: isPublicClient(request.app) ? 'clientRegistered' : 'appAuthorized',
        login,
        identity: [hashCode(code)],
        subject: {
          application: { clientId: request.app.clientId, name: request.app.name },
          detail: normalizeScopes(scopes).join(','),
        },
      })
    : undefined;
  await putCode(
    {
      codeHash: hashCode(code),
      clientId: request.app.clientId,
      login,
      redirectUri: request.redirectUri,
      scopes: normalizeScopes(scopes),
      codeChallenge: request.codeChallenge,
      expiresAt: Math.floor(Date.now() / 1000) + CODE_TTL_SECONDS,
      grantGeneration,
      resource: request.resource,
    },
    event ? securityEventItems(event) : [],
  );
  if (event) await announceSecurityEvents([event]);
  return withQuery(request.target, { code, state: request.state });
}

export type AuthorizationStart =
  | { readonly kind: 'issued'; readonly location: string }
  | { readonly kind: 'consent'; readonly alreadyGranted: readonly Scope[] };

/**
 * A signed-in user's authorize request. When the user's grant for the application already covers
 * every requested scope (by implication too; an omitted scope asks for nothing), no page is
 * shown: the code carries the union of the scopes already granted (spec §4.4 scope rules).
 */
export async function startAuthorization(
  login: string,
  request: AuthorizeRequest,
  known?: AuthorizeReads,
): Promise<AuthorizationStart> {
  const read = await readsFor(login, request.app.clientId, known);
  const granted = read.grantedScopes;
  if (read.granted && request.scopes.every((scope) => satisfies(granted, [scope])))
    return { kind: 'issued', location: await issueCode(login, request, granted, read.generation) };
  return { kind: 'consent', alreadyGranted: granted };
}

/** The user said yes: the code carries the ticked scopes among those requested (never more). */
export async function approveAuthorization(
  login: string,
  request: AuthorizeRequest,
  ticked: readonly string[],
  known?: AuthorizeReads,
): Promise<string> {
  const granted = request.scopes.filter((scope) => ticked.includes(scope));
  // Read before the code is stored: a revocation in between leaves the code already dead.
  const { generation } = await readsFor(login, request.app.clientId, known);
  return issueCode(login, request, granted, generation, true);
}

/** The user said no: `access_denied` to the registered callback. */
export const denyAuthorization = (request: AuthorizeRequest, docsUrl: string): string =>
  errorRedirect(request.app, 'access_denied', request.state, docsUrl, request.target);

export interface ExchangeInput {
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly code: string | undefined;
  readonly redirectUri: string | undefined;
  readonly codeVerifier: string | undefined;
  /** Every `resource` parameter sent (RFC 8707 §2.2). */
  readonly resources: readonly string[];
  readonly urls: ResourceUrls;
}

/**
 * The secret a client must prove: its own (registered applications), or none (`null`) for a public
 * client that sent none; a public client that sends a secret fails as a wrong one.
 */
const secretOf = (app: StoredApp | undefined, sent: string | undefined): string | null | undefined =>
  sent || (app && isPublicClient(app) ? null : undefined);

export type { IssuedToken } from './user-tokens.ts';

/**
 * A code presented again (RFC 6749 §4.1.2, RFC 9700 §4.4): revoke the token its first exchange
 * minted. Marking the code and recording the token are both conditional updates of the code item;
 * whichever comes second revokes. When the token exists but was never recorded (the first
 * exchange died in between), the token hash saved by the claim finds it.
 */
async function revokeOnReuse(codeHash: string): Promise<void> {
  const code = await markReused(codeHash);
  if (!code?.exchangedAt) return;
  if (code.authorizationId !== null) {
    await deleteAuthorization(code.login, code.authorizationId);
    return;
  }
  const lookup = code.tokenHash ? await lookupToken(code.tokenHash) : undefined;
  if (lookup) await deleteAuthorization(lookup.login, lookup.authorizationId);
}

/**
 * POST /login/oauth/access_token: authenticates the client and reads the code in one round trip,
 * checks the code (its client, expiry, redirect_uri and PKCE verifier), then mints a token of the
 * application for the user in the transaction that spends the code (see `createAuthorization`:
 * the token ring's registration, then that transaction). A second exchange of the same code fails
 * and revokes that token.
 */
export async function exchangeCode(input: ExchangeInput): Promise<IssuedToken> {
  const badCode = () => new OAuthError('bad_verification_code');
  const { clientId, clientSecret } = input;
  // Only a plausible client with a secret and a well-formed code cost a read; anything else is
  // refused as the client check, then the code check, would refuse it.
  if (!clientId || !isPlausibleClientId(clientId)) throw incorrectClient();
  if (!input.code || !CODE_FORMAT.test(input.code)) {
    const app = liveClient(await getApp(clientId));
    checkClient(app, secretOf(app, clientSecret));
    throw badCode();
  }
  const codeHash = hashCode(input.code);
  const found = await getAppAndCode(clientId, codeHash);
  const client = liveClient(found.app);
  // The client first: a party without the secret learns nothing about the code, and cannot spend it.
  const app = checkClient(client, secretOf(client, clientSecret));
  const code = found.code;
  if (!code || code.clientId !== app.clientId) throw badCode();
  if (code.exchangedAt !== null) {
    await revokeOnReuse(codeHash);
    throw badCode();
  }
  if (code.expiresAt <= Math.floor(Date.now() / 1000)) throw badCode();
  const redirectMatches = isPublicClient(app)
    ? input.redirectUri === code.redirectUri
    : exchangeRedirectMatches(input.redirectUri, code.redirectUri, app.callbackUrl);
  if (!redirectMatches) throw new OAuthError('redirect_uri_mismatch');
  // A public client's code always has a challenge (the authorize step required one).
  if (!verifierMatches(input.codeVerifier, code.codeChallenge)) throw badCode();
  const resource = checkRefreshResource(input.resources, code.resource, input.urls);
  if (!resource.ok) throw new OAuthError('invalid_target', 400, resource.reason);

  const pending = newUserToken(app, { publicClient: isPublicClient(app) });
  const { tokenHash } = pending;
  const created = await storeUserToken(pending, {
    login: code.login,
    clientId: app.clientId,
    scopes: code.scopes,
    grantGeneration: code.grantGeneration,
    resource: code.resource,
    claim: (authorizationId) => claimCodeItem(codeHash, { tokenHash, authorizationId }, now()),
  });
  // Another exchange of the same code spent it first: this one is the reuse, and revokes.
  if (created.kind === 'claim-refused') {
    await revokeOnReuse(codeHash);
    throw badCode();
  }
  // The user revoked the application after this code was issued: the code died with the grant.
  if (created.kind === 'grant-revoked') throw badCode();
  if (created.kind !== 'created')
    throw new Error('exchangeCode: an application token has no note or fingerprint to clash');
  // Created, or superseded by newer tokens under the limit before it was stored: either way the
  // code is spent and this exchange answers with its token, as if it had finished just before
  // whatever revoked it.
  return issuedToken(pending, code.scopes);
}
