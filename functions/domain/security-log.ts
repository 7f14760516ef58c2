/**
 * A person's security log (issue 38, item 3): what was done in their name, by them or by an
 * application holding their token, kept 90 days. GitHub's own security log names each event with
 * an `action` of the form `<resource>.<verb>` (`user.login`, `oauth_access.create`,
 * `oauth_authorization.create`); this catalogue keeps GitHub's names where GitHub has the event and
 * makes new ones in the same form where it has none (`repository_import.*`).
 */
import { nameUuid } from './event-identity.ts';

/**
 * Every kind of event: its action name and what the settings page says of it. A new kind is one
 * line here; the event's subject (below) says what it is about.
 */
export const SECURITY_EVENTS = {
  signedIn: { action: 'user.login', text: 'Signed in' },
  failedSignIn: { action: 'user.failed_login', text: 'Failed sign-in' },
  twoFactorEnabled: {
    action: 'two_factor_authentication.enabled',
    text: 'Two-factor authentication turned on',
  },
  twoFactorDisabled: {
    action: 'two_factor_authentication.disabled',
    text: 'Two-factor authentication turned off',
  },
  tokenCreated: { action: 'oauth_access.create', text: 'Token created' },
  tokenRegenerated: { action: 'oauth_access.regenerate', text: 'Token regenerated' },
  tokenRevoked: { action: 'oauth_access.destroy', text: 'Token revoked' },
  tokenReported: { action: 'oauth_access.revoke_reported', text: 'Token revoked after it was reported' },
  appAuthorized: { action: 'oauth_authorization.create', text: 'Application authorized' },
  /**
   * A client not registered here (an MCP client that registered itself, or named its metadata
   * document) authorized by the person: its registration, made by nobody, becomes theirs here.
   */
  clientRegistered: {
    action: 'oauth_application.register',
    text: 'Client not registered here authorized (it registered itself or named its metadata document)',
  },
  appRevoked: { action: 'oauth_authorization.destroy', text: 'Application revoked' },
  importStarted: { action: 'repository_import.start', text: 'Import started' },
  authorMapped: { action: 'repository_import.map_author', text: 'Import author mapped' },
  authorsFileApplied: { action: 'repository_import.apply_authors_file', text: 'Authors file applied' },
  followStarted: { action: 'repository_import.follow', text: 'Following the origin started' },
  /** Following stops only with the cut-over (there is no other way to stop it). */
  cutOver: { action: 'repository_import.cut_over', text: 'Cut over from the origin: following stopped' },
} as const satisfies Readonly<Record<string, { readonly action: string; readonly text: string }>>;

export type SecurityEventKind = keyof typeof SECURITY_EVENTS;
export type SecurityAction = (typeof SECURITY_EVENTS)[SecurityEventKind]['action'];

/** Events are kept this long (the item's TTL), as GitHub keeps its security log's recent events. */
export const SECURITY_LOG_SECONDS = 90 * 24 * 3600;

/** Who acted: the person (with a password or session, or a personal token), an application holding their token, or an administrator. */
export type SecurityActor =
  | { readonly kind: 'user'; readonly login: string }
  /** `login`: the person whose token the application held (null: the application's own credentials). */
  | {
      readonly kind: 'app';
      readonly login: string | null;
      readonly clientId: string;
      readonly appName: string | null;
    }
  /** The admin CLI. */
  | { readonly kind: 'admin' }
  /** The service itself, doing what the person asked earlier (a batch's queued import, started by its queue). */
  | { readonly kind: 'service' }
  /** Someone not signed in (a failed sign-in, a credential reporter). */
  | { readonly kind: 'anonymous' };

/** Where the request came from, as the service saw it. */
export interface RequestOrigin {
  /** The client's address (API Gateway's `sourceIp`); null when there was no request (the admin CLI). */
  readonly address: string | null;
  readonly userAgent: string | null;
}

/** What an event is about; only the fields its kind has. */
export interface SecuritySubject {
  readonly token?: { readonly id: number; readonly note: string | null; readonly lastEight: string };
  readonly application?: { readonly clientId: string; readonly name: string | null };
  /** `owner/name`. */
  readonly repository?: string;
  /** An import author mapped (its id and the name and email it now has). */
  readonly author?: { readonly id: number; readonly name: string | null; readonly email: string | null };
  /** How many authors a file mapped; how many failed sign-ins an aggregated event counts. */
  readonly count?: number;
  /** The kind of token a report revoked, or of sign-in (`password`, `basic`, `two-factor`). */
  readonly detail?: string;
}

export interface SecurityEvent {
  /** The event's identity (a name-based UUID): the same for every retry of one action. */
  readonly id: string;
  /** Whose log it is in. */
  readonly login: string;
  readonly kind: SecurityEventKind;
  readonly actor: SecurityActor;
  readonly origin: RequestOrigin;
  /** ISO 8601, milliseconds: the order of the log. */
  readonly createdAt: string;
  readonly subject: SecuritySubject;
}

/** An event as stored: with its action's name and when it may be deleted (epoch seconds, the TTL). */
export interface StoredSecurityEvent {
  readonly event: SecurityEvent;
  readonly action: SecurityAction;
  readonly expiresAt: number;
}

/**
 * The identity of an event: its kind, its person and the parts that make one action what it is
 * (an authorization id, a session, an import and its change), so an action done again after a
 * failure, or announced again, is recognisably the same event.
 */
export const securityEventId = (
  kind: SecurityEventKind,
  login: string,
  parts: readonly (string | number)[],
): string => nameUuid(['security-event', kind, login.toLowerCase(), ...parts]);

/** The epoch second at which an event made at `createdAt` may be deleted. */
export const securityEventExpiry = (createdAt: string): number =>
  Math.floor(Date.parse(createdAt) / 1000) + SECURITY_LOG_SECONDS;

/** The event with what its item stores besides it. */
export const storedSecurityEvent = (event: SecurityEvent): StoredSecurityEvent => ({
  event,
  action: SECURITY_EVENTS[event.kind].action,
  expiresAt: securityEventExpiry(event.createdAt),
});

/** Whether a stored kind is one this catalogue still has (an item from a removed kind is skipped). */
export const isSecurityEventKind = (kind: string): kind is SecurityEventKind =>
  Object.hasOwn(SECURITY_EVENTS, kind);

/**
 * Failed sign-ins are kept as one event per account, address and minute, counting the failures:
 * whoever guesses a password from one address adds at most one item a minute, and the failed-login
 * limit (`login-limits.ts`: 10 failures a 5-minute window per counter) bounds how many addresses
 * can add one.
 */
export const FAILED_SIGN_IN_BUCKET_SECONDS = 60;
export const failedSignInBucket = (epochMs: number): number =>
  Math.floor(epochMs / 1000 / FAILED_SIGN_IN_BUCKET_SECONDS);

/** The actor's login, or null for an administrator or someone not signed in. */
export const actorLogin = (actor: SecurityActor): string | null =>
  actor.kind === 'user' || actor.kind === 'app' ? actor.login : null;

/**
 * The event as the API and EventBridge show it, in the style of GitHub's audit log entries
 * (`action`, `actor`, `actor_ip`, `user_agent`, `created_at`, `@timestamp` in milliseconds).
 */
export function securityEventJson(event: SecurityEvent): Record<string, unknown> {
  const { subject, actor } = event;
  return {
    id: event.id,
    action: SECURITY_EVENTS[event.kind].action,
    user: event.login,
    actor: actorLogin(actor),
    actor_type: actor.kind === 'app' ? 'OauthApplication' : actor.kind === 'user' ? 'User' : actor.kind,
    actor_application: actor.kind === 'app' ? { client_id: actor.clientId, name: actor.appName } : null,
    actor_ip: event.origin.address,
    user_agent: event.origin.userAgent,
    created_at: event.createdAt,
    '@timestamp': Date.parse(event.createdAt),
    ...(subject.token
      ? { token: { id: subject.token.id, note: subject.token.note, last_eight: subject.token.lastEight } }
      : {}),
    ...(subject.application
      ? { application: { client_id: subject.application.clientId, name: subject.application.name } }
      : {}),
    ...(subject.repository ? { repository: subject.repository } : {}),
    ...(subject.author
      ? { author: { id: subject.author.id, name: subject.author.name, email: subject.author.email } }
      : {}),
    ...(subject.count !== undefined ? { count: subject.count } : {}),
    ...(subject.detail !== undefined ? { detail: subject.detail } : {}),
  };
}

/** An event's place in its log (its time and id), the cursor's content. */
const POSITION =
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z#[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The opaque cursor of the page after an event (base64url of its position). */
export const securityLogCursor = (position: string): string => Buffer.from(position).toString('base64url');

/** The position a cursor names; undefined when it is not one this service handed out. */
export function securityLogPosition(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,96}$/.test(cursor)) return undefined;
  const position = Buffer.from(cursor, 'base64url').toString('latin1');
  return POSITION.test(position) ? position : undefined;
}
