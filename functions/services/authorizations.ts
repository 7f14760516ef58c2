/**
 * What the authorization endpoints (and later the OAuth web flow) do, above the data layer:
 * check inputs against GitHub's rules, mint tokens, and turn the data layer's refusals into
 * GitHub's validation errors. Handlers call one function here each.
 */

import { getApp, type StoredApp } from '#data/apps';
import {
  type AuthorizationChanges,
  createAuthorization,
  deleteAuthorization,
  deleteGrant,
  getAuthorization,
  getOrCreateAuthorization,
  readUserAuthState,
  resetToken,
  updateAuthorization,
} from '#data/authorizations';
import { deleteKeysCreatedByApp } from '#data/public-keys';
import { secretMatches } from '#domain/apps';
import { type Authorization, isPersonal, TOKENS_PER_SCOPE_SET } from '#domain/authorizations';
import { invalidScopes, normalizeScopes, type Scope } from '#domain/scopes';
import type { SecurityEvent } from '#domain/security-log';
import { mintAccessToken } from '#domain/tokens';
import { type FieldError, notFound, validationFailed } from '#shared/errors';
import {
  announceSecurityEvents,
  recordSecurityEvent,
  securityEvent,
  securityEventItems,
  tokenSubject,
} from './security-log.ts';

/** A token's security event of `kind`, built for the transaction that makes the change. */
const tokenEvent = (
  kind: 'tokenCreated' | 'tokenRegenerated' | 'tokenRevoked',
  authorization: Authorization,
): SecurityEvent =>
  securityEvent({
    kind,
    login: authorization.login,
    // A token is created and revoked once; each regeneration gives it a new token hash.
    identity: kind === 'tokenRegenerated' ? [authorization.id, authorization.tokenHash] : [authorization.id],
    subject: tokenSubject(authorization),
  });

const RESOURCE = 'OauthAccess';
const refuse = (field: string, code: FieldError['code'], message?: string) =>
  validationFailed([{ resource: RESOURCE, field, code, ...(message ? { message } : {}) }]);

/** Valid, normalized scopes; 422 naming the invalid ones otherwise. */
export function checkedScopes(requested: readonly string[] | null | undefined): Scope[] {
  const scopes = requested ?? [];
  const invalid = invalidScopes(scopes);
  if (invalid.length > 0) throw refuse('scopes', 'custom', `scopes are invalid: ${invalid.join(',')}`);
  return normalizeScopes(scopes as Scope[]);
}

/** The application, if `secret` is its client secret; 422 on the field that is wrong. */
async function appForSecret(clientId: string, secret: string | null | undefined): Promise<StoredApp> {
  const app = await getApp(clientId);
  if (!app) throw refuse('client_id', 'invalid');
  if (!secret) throw refuse('client_secret', 'missing_field');
  if (!secretMatches(secret, app.secretHash)) throw refuse('client_secret', 'invalid');
  if (app.suspended) throw refuse('client_id', 'custom', 'application is suspended');
  return app;
}

export interface CreateInput {
  readonly scopes?: readonly string[] | null;
  readonly note: string;
  readonly noteUrl?: string | null;
  readonly clientId?: string | null;
  readonly clientSecret?: string | null;
  readonly fingerprint?: string | null;
}

/** POST /authorizations: a personal access token, or a token for an application (with its secret). */
export async function createForUser(
  login: string,
  input: CreateInput,
): Promise<{ authorization: Authorization; token: string }> {
  const scopes = checkedScopes(input.scopes);
  const clientId = input.clientId ?? '';
  if (clientId) await appForSecret(clientId, input.clientSecret);
  const fingerprint = input.fingerprint || null;
  const minted = mintAccessToken(clientId);
  let event: SecurityEvent | undefined;
  const result = await createAuthorization({
    // A personal token's event is written with it; an application's (its token ring's several
    // transactions) once it exists, below.
    along: (authorization) => {
      event = tokenEvent('tokenCreated', authorization);
      return securityEventItems(event);
    },
    login,
    clientId,
    scopes,
    note: input.note,
    noteUrl: input.noteUrl ?? null,
    fingerprint,
    tokenHash: minted.tokenHash,
    tokenLastEight: minted.tokenLastEight,
    claimFingerprint: clientId !== '' && fingerprint !== null,
    limit: TOKENS_PER_SCOPE_SET,
  });
  if (result.kind === 'note-taken') throw refuse('note', 'already_exists');
  if (result.kind === 'fingerprint-taken') throw refuse('fingerprint', 'already_exists');
  if (result.kind !== 'created')
    throw new Error(`unreachable: ${result.kind} without a code or a generation`);
  if (event) await announceSecurityEvents([event]);
  else await recordCreated(result.authorization);
  return { authorization: result.authorization, token: minted.token };
}

export interface GetOrCreateInput {
  readonly clientSecret?: string | null;
  readonly scopes?: readonly string[] | null;
  readonly note?: string | null;
  readonly noteUrl?: string | null;
  readonly fingerprint?: string | null;
}

/**
 * PUT /authorizations/clients/:client_id[/:fingerprint]: the user's authorization for the
 * application (and fingerprint), created only when none exists. An unknown client_id in the path
 * is 404, like any unknown resource.
 */
export async function getOrCreateForApp(
  login: string,
  clientId: string,
  input: GetOrCreateInput,
): Promise<{ created: boolean; authorization: Authorization; token?: string }> {
  if (!(await getApp(clientId))) throw notFound();
  await appForSecret(clientId, input.clientSecret);
  const scopes = checkedScopes(input.scopes);
  const minted = mintAccessToken(clientId);
  const result = await getOrCreateAuthorization({
    login,
    clientId,
    scopes,
    note: input.note ?? null,
    noteUrl: input.noteUrl ?? null,
    fingerprint: input.fingerprint || null,
    tokenHash: minted.tokenHash,
    tokenLastEight: minted.tokenLastEight,
    limit: TOKENS_PER_SCOPE_SET,
  });
  if (result.kind !== 'created') return { created: false, authorization: result.authorization };
  await recordCreated(result.authorization);
  return { created: true, authorization: result.authorization, token: minted.token };
}

/** An application token's creation, recorded once it exists (named by its id: once however often). */
const recordCreated = (authorization: Authorization): Promise<void> =>
  recordSecurityEvent({
    kind: 'tokenCreated',
    login: authorization.login,
    identity: [authorization.id],
    subject: tokenSubject(authorization),
  });

export interface UpdateInput {
  readonly scopes?: readonly string[] | null;
  readonly addScopes?: readonly string[] | null;
  readonly removeScopes?: readonly string[] | null;
  readonly note?: string | null;
  readonly noteUrl?: string | null;
  readonly fingerprint?: string | null;
}

/** PATCH /authorizations/:id. Only one of scopes, add_scopes and remove_scopes per request. */
export async function updateForUser(current: Authorization, input: UpdateInput): Promise<Authorization> {
  const scopeKeys = [input.scopes, input.addScopes, input.removeScopes].filter(
    (value) => value !== undefined,
  );
  if (scopeKeys.length > 1) {
    throw refuse(
      'scopes',
      'custom',
      'Only one of scopes, add_scopes, or remove_scopes may be sent per request',
    );
  }
  const changes: { -readonly [K in keyof AuthorizationChanges]: AuthorizationChanges[K] } = {};
  if (input.scopes !== undefined) changes.scopes = checkedScopes(input.scopes);
  if (input.addScopes !== undefined)
    changes.scopes = checkedScopes([...current.scopes, ...(input.addScopes ?? [])]);
  if (input.removeScopes !== undefined) {
    const removed = new Set(
      checkedScopes(input.removeScopes ?? []).concat((input.removeScopes ?? []) as Scope[]),
    );
    changes.scopes = normalizeScopes(current.scopes.filter((scope) => !removed.has(scope)));
  }
  if (input.note !== undefined) {
    if (current.clientId === '' && !input.note) throw refuse('note', 'missing_field');
    changes.note = input.note;
  }
  if (input.noteUrl !== undefined) changes.noteUrl = input.noteUrl;
  if (input.fingerprint !== undefined) changes.fingerprint = input.fingerprint || null;
  const result = await updateAuthorization(current.login, current.id, changes);
  if (result.kind === 'not-found') throw notFound();
  if (result.kind === 'note-taken') throw refuse('note', 'already_exists');
  if (result.kind === 'fingerprint-taken') throw refuse('fingerprint', 'already_exists');
  return result.authorization;
}

/**
 * Revokes a user's grant for an application: every token of that application for the user (the
 * grant goes with the last of them), and the SSH and deploy keys those tokens created.
 */
export async function revokeGrant(login: string, clientId: string): Promise<void> {
  const { deleted, generation } = await deleteGrant(login, clientId);
  await deleteKeysCreatedByApp(login, clientId);
  // Several transactions (one per token): recorded after them, named by the generation raised.
  if (deleted > 0) {
    const app = await getApp(clientId);
    await recordSecurityEvent({
      kind: 'appRevoked',
      login,
      identity: [clientId, generation],
      subject: { application: { clientId, name: app?.name ?? null } },
    });
  }
}

/** A fresh token for an existing authorization (the token kind follows the authorization). */
const mintFor = (authorization: Pick<Authorization, 'clientId'>) => mintAccessToken(authorization.clientId);

/** The user's authorizations in id order. */
export const authorizationsOf = async (login: string): Promise<Authorization[]> =>
  (await readUserAuthState(login)).authorizations;

/** One of the user's authorizations; 404 for anyone else's or none. */
export async function authorizationOf(login: string, id: number): Promise<Authorization> {
  const authorization = await getAuthorization(login, id);
  if (!authorization) throw notFound();
  return authorization;
}

/** Deletes one of the user's authorizations (its token stops working at once); 404 when there is none. */
export async function deleteForUser(login: string, id: number): Promise<void> {
  let event: SecurityEvent | undefined;
  const deleted = await deleteAuthorization(login, id, (authorization) => {
    event = tokenEvent('tokenRevoked', authorization);
    return securityEventItems(event);
  });
  if (!deleted) throw notFound();
  if (event) await announceSecurityEvents([event]);
}

/**
 * A new token for an authorization: the old one fails on the very next request. Undefined when
 * the authorization was revoked or reset by someone else meanwhile.
 */
export async function resetFor(
  current: Authorization,
): Promise<{ authorization: Authorization; token: string } | undefined> {
  const minted = mintFor(current);
  const next = { tokenHash: minted.tokenHash, tokenLastEight: minted.tokenLastEight };
  const event = tokenEvent('tokenRegenerated', { ...current, ...next });
  const authorization = await resetToken(current, next, securityEventItems(event));
  if (!authorization) return undefined;
  await announceSecurityEvents([event]);
  return { authorization, token: minted.token };
}

/** The user's personal access tokens, newest first. */
export const personalTokensOf = async (login: string): Promise<Authorization[]> =>
  (await authorizationsOf(login)).filter(isPersonal).sort((a, b) => b.id - a.id);

/** One of the user's personal access tokens; 404 for anything else. */
export async function personalTokenOf(login: string, id: number): Promise<Authorization> {
  const authorization = await authorizationOf(login, id);
  if (!isPersonal(authorization)) throw notFound();
  return authorization;
}

/** An application's owner revokes one user's token of it; 404 unless it is that user's token of this app. */
export async function revokeUserTokenOfApp(clientId: string, login: string, id: number): Promise<void> {
  const authorization = await authorizationOf(login, id);
  if (authorization.clientId !== clientId) throw notFound();
  await deleteForUser(authorization.login, authorization.id);
}
