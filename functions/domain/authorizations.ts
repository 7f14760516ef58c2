import type { Scope } from './scopes.ts';

/** An OAuth authorization (a token's record). The token itself is never stored, only its hash. */
export interface Authorization {
  readonly id: number;
  readonly login: string;
  /** The application's client_id; empty for a personal access token. */
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  readonly note: string | null;
  readonly noteUrl: string | null;
  readonly fingerprint: string | null;
  readonly tokenHash: string;
  readonly tokenLastEight: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** When the token last authenticated a request, to the hour (null: never). */
  readonly lastUsedAt: string | null;
  /** When the token stops working (ISO 8601); null for tokens that do not expire. */
  readonly expiresAt: string | null;
  /**
   * The protected resource the token was granted for (RFC 8707): the MCP endpoint's URL; absent
   * for a REST API token (every token from before resource indicators). See `resources.ts`.
   */
  readonly resource?: string;
}

/** True once an expiring token's time is up (it then authenticates nothing). */
export const isExpired = (authorization: Pick<Authorization, 'expiresAt'>, now: number): boolean =>
  authorization.expiresAt !== null && Date.parse(authorization.expiresAt) <= now;

/** How stale `lastUsedAt` may get before a request writes it again (one write per token per hour). */
export const LAST_USED_RESOLUTION_MS = 3600_000;

export const isLastUseStale = (lastUsedAt: string | null, now: number): boolean =>
  lastUsedAt === null || now - Date.parse(lastUsedAt) >= LAST_USED_RESOLUTION_MS;

/** A grant: one per user and application with at least one token. */
export interface Grant {
  readonly id: number;
  readonly login: string;
  readonly clientId: string;
  /** Union of the scopes of the application's tokens for the user. */
  readonly scopes: readonly Scope[];
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The latest use of any of the application's tokens for the user. */
  readonly lastUsedAt: string | null;
}

/**
 * Tokens per user/application/scope set; creating one more revokes the oldest (GitHub's number).
 * The data layer's token ring applies it (data/token-ring.ts).
 */
export const TOKENS_PER_SCOPE_SET = 10;

/** `client_id` of the synthetic application GitHub shows for personal access tokens. */
export const PERSONAL_CLIENT_ID = '00000000000000000000';

export const isPersonal = (authorization: Pick<Authorization, 'clientId'>): boolean =>
  authorization.clientId === '';

/** Grants as the user sees them: one per application, scopes the union of its tokens' scopes. */
export function grantScopes(authorizations: readonly Authorization[], clientId: string): Scope[] {
  const union = new Set<Scope>();
  for (const a of authorizations) if (a.clientId === clientId) for (const s of a.scopes) union.add(s);
  return [...union].sort();
}

/** What is stored of a grant itself; its scopes and last use come from its tokens. */
export interface GrantRecord {
  readonly id: number;
  readonly clientId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const lastUse = (authorizations: readonly Authorization[]): string | null =>
  authorizations.reduce<string | null>(
    (latest, a) => (a.lastUsedAt && (!latest || a.lastUsedAt > latest) ? a.lastUsedAt : latest),
    null,
  );

/** A user's grants in id order: one per application that still holds at least one of their tokens. */
export function grantsOf(
  login: string,
  authorizations: readonly Authorization[],
  records: Iterable<GrantRecord>,
): Grant[] {
  const grants: Grant[] = [];
  for (const record of records) {
    const tokens = authorizations.filter((a) => a.clientId === record.clientId);
    if (tokens.length === 0) continue;
    grants.push({
      id: Number(record.id),
      login,
      clientId: record.clientId,
      scopes: grantScopes(authorizations, record.clientId),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      lastUsedAt: lastUse(tokens),
    });
  }
  return grants.sort((a, b) => a.id - b.id);
}
