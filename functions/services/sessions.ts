/** Browser sessions: the cookie value is made and hashed here; the data layer sees only the hash. */

import {
  deleteSession as deleteStoredSession,
  getSession as getStoredSession,
  putSession,
} from '#data/sessions';
import {
  hashSecretValue,
  newSecret,
  PENDING_OTP_SECONDS,
  SESSION_SECONDS,
  type Session,
} from '#domain/sessions';
import { announceSecurityEvents, securityEvent, securityEventItems } from './security-log.ts';

/** Starts a session; returns the cookie value (shown once) and the session. */
async function createSession(
  login: string,
  pendingOtp: boolean,
): Promise<{ cookie: string; session: Session }> {
  const cookie = newSecret();
  const expiresAt = Math.floor(Date.now() / 1000) + (pendingOtp ? PENDING_OTP_SECONDS : SESSION_SECONDS);
  const session: Session = {
    idHash: hashSecretValue(cookie),
    login,
    csrf: newSecret(),
    pendingOtp,
    expiresAt,
  };
  // A full session is a sign-in: its security event is written with it (a pending two-factor one is not yet).
  const signedIn = pendingOtp
    ? undefined
    : securityEvent({
        kind: 'signedIn',
        login,
        identity: [session.idHash],
        actor: { kind: 'user', login },
        subject: { detail: 'web' },
      });
  await putSession(session, signedIn ? securityEventItems(signedIn) : []);
  if (signedIn) await announceSecurityEvents([signedIn]);
  return { cookie, session };
}

/** The live session for a cookie value; expired ones count as absent (TTL deletion is lazy). */
export async function getSession(cookie: string): Promise<Session | undefined> {
  const session = await getStoredSession(hashSecretValue(cookie));
  return session && session.expiresAt > Math.floor(Date.now() / 1000) ? session : undefined;
}

export const deleteSession = (idHash: string): Promise<void> => deleteStoredSession(idHash);

/**
 * A new session for a browser that may already hold one (another user's, or a half-done two-factor
 * sign-in): the old one ends on the server, since the new cookie replaces it and the old value
 * must not stay usable. Returns the new cookie value.
 */
export async function replaceSession(
  previous: Session | undefined,
  login: string,
  pendingOtp: boolean,
): Promise<string> {
  if (previous) await deleteStoredSession(previous.idHash);
  return (await createSession(login, pendingOtp)).cookie;
}
