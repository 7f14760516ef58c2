/**
 * The authorization code flow's pure rules (spec §4.4): the authorize request's parameters, the
 * `scope` parameter, and what a code is. `services/oauth-flow.ts` applies them over the data layer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isScope, normalizeScopes, type Scope } from './scopes.ts';

/** GitHub's codes expire after 10 minutes (github-behaviour §3.1). */
export const CODE_TTL_SECONDS = 600;
/** Longer `state` values are refused (they travel in URLs; 1 KiB is far beyond any real use). */
export const MAX_STATE_LENGTH = 1024;

/** The authorize request's parameters, as GET query or POST form fields (and their hidden copies). */
export const AUTHORIZE_PARAMETERS = [
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'allow_signup',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  // RFC 8707: the protected resource the token is for (this server's REST API or its MCP endpoint).
  'resource',
] as const;
export type AuthorizeParameter = (typeof AUTHORIZE_PARAMETERS)[number];
export type AuthorizeParams = Readonly<Partial<Record<AuthorizeParameter, string>>>;

/**
 * Reads the parameters through `values` (every value a name was given); a parameter given more
 * than once is refused (RFC 6749 §3.1).
 */
export function readAuthorizeParams(
  values: (name: string) => readonly string[],
): { readonly params: AuthorizeParams } | { readonly repeated: string } {
  const params: Partial<Record<AuthorizeParameter, string>> = {};
  for (const name of AUTHORIZE_PARAMETERS) {
    const given = values(name);
    if (given.length > 1) return { repeated: name };
    if (given[0] !== undefined) params[name] = given[0];
  }
  return { params };
}

/** Space-delimited (commas accepted, as Octokit joins arrays with them); unknown scopes are dropped. */
export const parseScopeParameter = (scope: string | undefined): Scope[] =>
  normalizeScopes((scope ?? '').split(/[\s,]+/).filter(isScope));

/**
 * Client ids are 20 hex characters, a well-known client's own id, or a metadata document's URL (at
 * most 255 characters); anything implausible is unknown without a database read.
 */
export const isPlausibleClientId = (value: string): boolean => /^[\x21-\x7e]{1,255}$/.test(value);

/** 160 random bits; only the SHA-256 is stored. */
export const newCode = (): string => randomBytes(20).toString('hex');
export const hashCode = (code: string): string => createHash('sha256').update(code).digest('hex');
/** What a code looks like; anything else is refused without a read. */
export const CODE_FORMAT = /^[0-9a-f]{40}$/;
