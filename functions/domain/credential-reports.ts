import { hashToken, hasValidChecksum, isWellFormedRefreshToken } from './tokens.ts';

/**
 * GitHub's credential revocation API (`POST /credentials/revoke`, 2025): anyone who finds leaked
 * credentials reports them, without authenticating; the valid ones are revoked and their owners
 * told. It accepts every kind of token this service issues: personal access tokens (`ghp_`), OAuth
 * application tokens (`gho_`) and refresh tokens (`ghr_`, whose whole family is revoked).
 */

/** GitHub's limits: 1,000 credentials a request, 60 requests an hour from one caller. */
export const MAX_REPORTED_CREDENTIALS = 1000;
export const REPORTS_PER_WINDOW = 60;
export const REPORT_WINDOW_SECONDS = 3600;

/** How long the owner's notice of a revocation stays on the settings page. */
export const NOTICE_SECONDS = 90 * 24 * 3600;

/** A reported credential worth a database read: well-formed, by its kind and hash. */
export interface ReportedToken {
  readonly kind: 'access' | 'refresh';
  readonly tokenHash: string;
}

/**
 * The distinct well-formed tokens among the reported strings; anything else (look-alikes, other
 * services' secrets, duplicates) costs no read.
 */
export function reportedTokens(credentials: readonly string[]): ReportedToken[] {
  const found = new Map<string, ReportedToken>();
  for (const credential of new Set(credentials)) {
    const kind = hasValidChecksum(credential)
      ? 'access'
      : isWellFormedRefreshToken(credential)
        ? 'refresh'
        : undefined;
    if (kind) {
      const tokenHash = hashToken(credential);
      found.set(tokenHash, { kind, tokenHash });
    }
  }
  return [...found.values()];
}

/** What the owner sees of a revocation: which token (its access token's last eight), of what, and when. */
export interface RevocationNotice {
  readonly kind: 'personal' | 'oauth' | 'refresh';
  readonly authorizationId: number;
  readonly tokenLastEight: string;
  /** The application's client id; empty for a personal access token. */
  readonly clientId: string;
  readonly note: string | null;
  readonly revokedAt: string;
}

/** The fixed window (epoch seconds / window length) a report at `nowMs` counts in. */
export const reportWindow = (nowMs: number): number => Math.floor(nowMs / 1000 / REPORT_WINDOW_SECONDS);
