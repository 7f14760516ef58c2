/**
 * `POST /credentials/revoke`: revokes the valid tokens among reported credentials and leaves each
 * owner a notice. The caller learns nothing of which tokens existed: the answer is the same
 * whatever was reported. Costs: one conditional write for the caller's rate limit, one
 * BatchGetItem per 100 well-formed tokens (sent together), then for each valid token the exact
 * deletion every revocation uses (a Query of its owner's authorizations and one transaction, which
 * also puts the notice).
 */
import { revokeReportedAuthorization } from '#data/authorization-change';
import {
  countReport,
  findReportedTokens,
  putRevocationNotice,
  revocationNoticesOf,
} from '#data/credential-reports';
import { isExpired } from '#domain/authorizations';
import {
  NOTICE_SECONDS,
  REPORT_WINDOW_SECONDS,
  REPORTS_PER_WINDOW,
  type RevocationNotice,
  reportedTokens,
  reportWindow,
} from '#domain/credential-reports';
import type { SecurityEvent } from '#domain/security-log';
import { HttpError } from '#shared/errors';
import { announceSecurityEvents, securityEvent, securityEventItems, tokenSubject } from './security-log.ts';

/** One valid reported token, as its owner's authorization to revoke. */
interface Revocation {
  readonly login: string;
  readonly authorizationId: number;
  /** The reported access token's hash (revoked only while current); undefined for a refresh token. */
  readonly tokenHash: string | undefined;
  readonly kind: RevocationNotice['kind'];
}

/** GitHub's answer when a caller exceeds its requests (primary rate limit, unauthenticated). */
function rateLimited(address: string, window: number): HttpError {
  const reset = (window + 1) * REPORT_WINDOW_SECONDS;
  return new HttpError(429, `API rate limit exceeded for ${address}.`, {
    headers: {
      'Retry-After': String(Math.max(1, reset - Math.floor(Date.now() / 1000))),
      'X-RateLimit-Limit': String(REPORTS_PER_WINDOW),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(reset),
    },
  });
}

/** Tokens of one owner are revoked one after another (they share a partition and a grant ring). */
const OWNERS_AT_ONCE = 8;

async function revokeAll(revocations: readonly Revocation[]): Promise<void> {
  const byOwner = new Map<string, Revocation[]>();
  for (const revocation of revocations)
    byOwner.set(revocation.login, [...(byOwner.get(revocation.login) ?? []), revocation]);
  const owners = [...byOwner.values()];
  const worker = async () => {
    for (let group = owners.shift(); group; group = owners.shift())
      for (const revocation of group) await revokeOne(revocation);
  };
  await Promise.all(Array.from({ length: Math.min(OWNERS_AT_ONCE, owners.length) }, worker));
}

async function revokeOne({ login, authorizationId, tokenHash, kind }: Revocation): Promise<void> {
  const revokedAt = new Date().toISOString();
  const expiresAt = Math.floor(Date.parse(revokedAt) / 1000) + NOTICE_SECONDS;
  let event: SecurityEvent | undefined;
  const revoked = await revokeReportedAuthorization(login, authorizationId, tokenHash, (authorization) => {
    // The owner's security log says so in the same transaction as the notice.
    event = securityEvent({
      kind: 'tokenReported',
      login: authorization.login,
      identity: [authorization.id],
      subject: { ...tokenSubject(authorization), detail: kind },
      actor: { kind: 'anonymous' },
    });
    return [
      putRevocationNotice(
        authorization,
        {
          kind,
          authorizationId,
          tokenLastEight: authorization.tokenLastEight,
          clientId: authorization.clientId,
          note: authorization.note,
          revokedAt,
        },
        expiresAt,
      ),
      ...securityEventItems(event),
    ];
  });
  if (revoked && event) await announceSecurityEvents([event]);
}

/** Revokes what is valid among `credentials` (already checked: at most 1,000 strings). */
export async function revokeReportedCredentials(
  credentials: readonly string[],
  address: string,
): Promise<void> {
  const nowMs = Date.now();
  const window = reportWindow(nowMs);
  const expiresAt = (window + 2) * REPORT_WINDOW_SECONDS;
  if (!(await countReport(address, window, REPORTS_PER_WINDOW, expiresAt)))
    throw rateLimited(address, window);
  const { access, refresh } = await findReportedTokens(reportedTokens(credentials));
  const revocations: Revocation[] = [
    ...access
      .filter((lookup) => !isExpired(lookup.authorization, nowMs))
      .map((lookup) => ({
        login: lookup.login,
        authorizationId: lookup.authorizationId,
        tokenHash: lookup.tokenHash,
        kind: lookup.clientId === '' ? ('personal' as const) : ('oauth' as const),
      })),
    // A spent or expired refresh token buys nothing: it is not a valid credential.
    ...refresh
      .filter((token) => token.usedAt === null && token.expiresAt > nowMs / 1000)
      .map((token) => ({
        login: token.login,
        authorizationId: token.authorizationId,
        tokenHash: undefined,
        kind: 'refresh' as const,
      })),
  ];
  await revokeAll(revocations);
}

/** How many of a user's revocation notices the settings page shows. */
const NOTICES_SHOWN = 20;

/** The user's recent revocation notices, newest first (the settings page of tokens). */
export const revocationNoticesFor = (login: string): Promise<RevocationNotice[]> =>
  revocationNoticesOf(login, NOTICES_SHOWN);
